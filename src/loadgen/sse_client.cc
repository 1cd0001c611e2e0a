#include "loadgen/sse_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "loadgen/sse_parser.h"

namespace ridge::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Turns the stream's events into the result's timings and token counts.
class StreamTimer {
 public:
  StreamTimer(ApiKind api, RequestResult& result, Clock::time_point start) : api_(api), r_(result), start_(start), last_(start) {}

  void on_event(const SseEvent& event) {
    if (event.data == "[DONE]") return;
    if (event.type == "error") return set_error(error_message_of(event.data));
    const auto chunk_json = nlohmann::json::parse(event.data, nullptr, /*allow_exceptions=*/false);
    if (chunk_json.is_discarded()) return set_error("unreadable chunk: " + error_message_of(event.data));
    const StreamChunk chunk = parse_stream_chunk(chunk_json, api_);
    if (chunk.error) return set_error(*chunk.error);
    if (chunk.prompt_tokens) r_.input_tokens = *chunk.prompt_tokens, r_.usage_reported = true;
    if (chunk.completion_tokens) usage_output_ = *chunk.completion_tokens;
    if (chunk.content.empty()) return;  // the role announcement, the usage chunk
    const auto now = Clock::now();
    if (chunks_ == 0) {
      r_.ttft_s = seconds_between(start_, now);
    } else {
      r_.itl_s.push_back(seconds_between(last_, now));
    }
    last_ = now;
    ++chunks_;
  }

  // After the stream ended normally.
  void close(Clock::time_point end) {
    r_.e2e_s = seconds_between(start_, end);
    r_.output_tokens = usage_output_.value_or(chunks_);
    if (!error_.empty()) {
      r_.error = error_;
    } else if (chunks_ == 0) {
      r_.error = "the stream held no generated text";
    } else {
      r_.ok = true;
    }
  }

 private:
  void set_error(const std::string& message) {
    if (error_.empty()) error_ = "stream error: " + message;
  }

  ApiKind api_;
  RequestResult& r_;
  Clock::time_point start_, last_;
  int chunks_ = 0;
  std::optional<int> usage_output_;
  std::string error_;
};

// httplib names its errors tersely ("Connection"); say what happened.
std::string describe(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (refused or unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "connection timed out";
    case httplib::Error::Read:
      return "read failed (connection closed, or no data within --timeout)";
    case httplib::Error::Write:
      return "write failed (connection closed)";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "TLS certificate not trusted";
    default:
      return "HTTP client error: " + httplib::to_string(error);
  }
}

template <typename Client>
void set_timeouts(Client& client, double seconds) {
  const auto whole = time_t(seconds);
  const auto micros = time_t(std::lround((seconds - double(whole)) * 1e6));
  client.set_connection_timeout(whole, micros);
  client.set_read_timeout(whole, micros);
  client.set_write_timeout(whole, micros);
}

}  // namespace

RequestResult send_streaming_request(const Endpoint& endpoint, const RequestSpec& request) {
  RequestResult result;
  result.input_tokens = request.input_tokens;
  BaseUrl url;
  try {
    url = parse_base_url(endpoint.base_url);
  } catch (const Error& e) {
    result.error = e.what();
    return result;
  }
  httplib::Client client(url.scheme_host_port);
  if (!client.is_valid()) {
    result.error = fmt::format("cannot connect to '{}'", url.scheme_host_port);
    return result;
  }
  set_timeouts(client, endpoint.timeout_s);
  if (!endpoint.api_key.empty()) client.set_bearer_token_auth(endpoint.api_key);

  httplib::Request req;
  req.method = "POST";
  req.path = url.path_prefix + api_path(endpoint.api);
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  req.body = request_body(endpoint, request).dump();

  const auto start = Clock::now();
  StreamTimer timer(endpoint.api, result, start);
  SseParser parser([&](const SseEvent& event) { timer.on_event(event); });
  int status = 0;
  std::string error_body;  // the body of a non-2xx answer, for its message
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (status / 100 == 2) {
      parser.feed({data, size});
    } else if (error_body.size() < 4096) {
      error_body.append(data, size);
    }
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const bool sent = client.send(req, res, error);
  const auto end = Clock::now();
  if (!sent) {
    result.error = fmt::format("{}: {}", url.scheme_host_port, describe(error));
    return result;
  }
  if (res.status / 100 != 2) {
    const std::string message = error_message_of(error_body.empty() ? res.body : error_body);
    result.error = message.empty() ? fmt::format("HTTP {}", res.status) : fmt::format("HTTP {}: {}", res.status, message);
    return result;
  }
  parser.finish();
  timer.close(end);
  return result;
}

}  // namespace ridge::loadgen
