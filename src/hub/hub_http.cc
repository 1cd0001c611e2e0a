#include "hub/hub_http.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace ridge::hub {

namespace {

constexpr int kMaxRedirects = 8;
constexpr size_t kMaxErrorBody = 4096;
constexpr size_t kMaxDocument = 64u << 20;  // the API's JSON for a repository of thousands of files fits

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

bool is_redirect(int status) { return status == 301 || status == 302 || status == 303 || status == 307 || status == 308; }
bool is_success(int status) { return status >= 200 && status < 300; }

}  // namespace

std::string HttpReply::header(const std::string& name) const {
  for (const auto& [key, value] : headers)
    if (iequals(key, name)) return value;
  return "";
}

UrlParts split_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) fail("'{}' is not an absolute URL", url);
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") fail("'{}': only http and https URLs can be fetched", url);
  const size_t path_start = url.find('/', scheme_end + 3);
  UrlParts parts;
  parts.origin = url.substr(0, path_start);
  parts.path = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (parts.origin.size() <= scheme_end + 3) fail("'{}' has no host", url);
  return parts;
}

std::string resolve_location(const std::string& from, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  const UrlParts base = split_url(from);
  if (location.starts_with("//")) return from.substr(0, from.find("://") + 1) + location;
  if (location.starts_with("/")) return base.origin + location;
  const std::string dir = base.path.substr(0, base.path.rfind('/') + 1);
  return base.origin + dir + location;
}

std::string url_encode(const std::string& text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HttpReply HubHttp::get(const std::string& url) const { return fetch(url, 0, nullptr); }

HttpReply HubHttp::stream(const std::string& url, int64_t offset, const BodySink& sink) const {
  return fetch(url, offset, &sink);
}

HttpReply HubHttp::fetch(const std::string& url, int64_t offset, const BodySink* sink) const {
  const std::string token_origin = split_url(url).origin;
  std::string current = url;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    const UrlParts parts = split_url(current);
    httplib::Client client(parts.origin);
    client.set_follow_location(false);
    client.set_connection_timeout(15);
    client.set_read_timeout(60);
    httplib::Headers headers{{"User-Agent", "ridge/0.1"}, {"Accept-Encoding", "identity"}};
    if (!token_.empty() && parts.origin == token_origin) headers.emplace("Authorization", "Bearer " + token_);
    if (offset > 0) headers.emplace("Range", "bytes=" + std::to_string(offset) + "-");
    HttpReply reply;
    reply.final_url = current;
    bool sink_stopped = false, too_large = false;  // no exception may cross httplib's callbacks
    const auto on_response = [&](const httplib::Response& r) {
      reply.status = r.status;
      reply.headers.insert(r.headers.begin(), r.headers.end());
      return true;
    };
    const auto on_body = [&](const char* data, size_t size) {
      if (is_success(reply.status) && sink) {
        if ((*sink)(reply.status, data, size)) return true;
        sink_stopped = true;
        return false;
      }
      const size_t cap = is_success(reply.status) ? kMaxDocument : kMaxErrorBody;
      if (reply.body.size() + size > cap) {
        too_large = is_success(reply.status);
        return !too_large;  // the start of an error page is enough
      }
      reply.body.append(data, size);
      return true;
    };
    const httplib::Result result = client.Get(parts.path, headers, on_response, on_body);
    if (too_large) fail("{}: the answer is larger than {} bytes", current, kMaxDocument);
    if (!result && !sink_stopped) reply.transport_error = httplib::to_string(result.error());
    if (is_redirect(reply.status) && reply.transport_error.empty() && !sink_stopped) {
      const std::string location = reply.header("Location");
      if (location.empty()) fail("{}: HTTP {} redirect without a Location", current, reply.status);
      current = resolve_location(current, location);
      continue;
    }
    return reply;
  }
  fail("{}: more than {} redirects", url, kMaxRedirects);
}

void fail_http_status(const HttpReply& reply, const std::string& what) {
  const std::string code = reply.header("X-Error-Code");
  const std::string message = reply.header("X-Error-Message");
  const std::string detail = message.empty() ? "" : " (" + message + ")";
  if (reply.status == 401 || reply.status == 403 || code == "GatedRepo") {
    if (code == "RepoNotFound")
      fail("{}: repository not found, or gated or private: pass a token with HF_TOKEN=... or `--hf-token` (HTTP {})",
           what, reply.status);
    fail("{}: gated or private: pass a token with HF_TOKEN=... or `--hf-token` (HTTP {}){}", what, reply.status, detail);
  }
  if (reply.status == 404) {
    if (code == "RepoNotFound") fail("{}: repository not found (HTTP 404){}", what, detail);
    if (code == "RevisionNotFound") fail("{}: revision not found (HTTP 404){}", what, detail);
    if (code == "EntryNotFound") fail("{}: file not found (HTTP 404){}", what, detail);
    fail("{}: not found (HTTP 404){}", what, detail);
  }
  fail("{}: HTTP {}{}", what, reply.status, detail);
}

}  // namespace ridge::hub
