#pragma once
// HTTP for the Hub (cpp-httplib; HTTPS through OpenSSL): GET with redirects followed by hand so that
// the token goes only to the Hub's own host (LFS files are redirected to a storage host), a Range
// to resume from, and the body streamed to a sink. Transport failures come back as data, so a
// download can resume; HTTP errors become Errors through `fail_http_status`.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace ridge::hub {

struct HttpReply {
  int status = 0;                               // 0: no response at all
  std::multimap<std::string, std::string> headers;  // of the last hop
  std::string body;                             // a document's text, or the first bytes of an error page
  std::string transport_error;                  // "" unless the connection failed or broke mid-body
  std::string final_url;                        // after redirects
  std::string header(const std::string& name) const;  // "" if absent; case-insensitive name
};

// Receives a 2xx body's bytes with its status (200: the whole file, 206: from the asked offset);
// returning false stops the transfer (the caller knows why).
using BodySink = std::function<bool(int status, const char* data, size_t size)>;

class HubHttp {
 public:
  // `token` goes as "Authorization: Bearer ..." to the host of each request's first URL only.
  explicit HubHttp(std::string token) : token_(std::move(token)) {}

  // A document (the API's JSON): the whole body in `reply.body`.
  HttpReply get(const std::string& url) const;
  // A file's bytes from `offset` on ("Range: bytes=offset-" when offset > 0) into `sink`.
  HttpReply stream(const std::string& url, int64_t offset, const BodySink& sink) const;

 private:
  HttpReply fetch(const std::string& url, int64_t offset, const BodySink* sink) const;
  std::string token_;
};

// "scheme://host[:port]" and "/path?query" of an absolute URL; Error if it is not http(s).
struct UrlParts {
  std::string origin;
  std::string path;
};
UrlParts split_url(const std::string& url);
// A redirect's Location made absolute against the URL that answered it.
std::string resolve_location(const std::string& from, const std::string& location);
// Percent-encodes everything but unreserved characters; '/' too unless `keep_slash`.
std::string url_encode(const std::string& text, bool keep_slash);

// What an HTTP failure means for `what` ("repository org/repo", "file x in org/repo"): 401/403 say
// how to pass a token, 404 names what is missing (the Hub's X-Error-Code tells repo from revision
// from file). Never returns.
[[noreturn]] void fail_http_status(const HttpReply& reply, const std::string& what);

}  // namespace ridge::hub
