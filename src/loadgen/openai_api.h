#pragma once
// The OpenAI-compatible wire format, without any networking: where requests go, the JSON body of a
// streaming completion or chat request, and what one streamed chunk carries.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "loadgen/workload.h"

namespace ridge::loadgen {

enum class ApiKind { Completions, Chat };

struct Endpoint {
  std::string base_url = "http://127.0.0.1:8080";  // scheme://host:port, maybe with a path prefix
  ApiKind api = ApiKind::Completions;
  std::string model = "default";
  std::string api_key;     // sent as a bearer token when set
  bool ignore_eos = true;  // llama.cpp's and vLLM's extension: outputs run to max_tokens
  double temperature = 0;  // 0: greedy; above it sampled (speculation's acceptance falls with it)
  double top_p = 1;        // sent when below 1
  double timeout_s = 600;  // connect, and wait between two reads
};

ApiKind parse_api_kind(std::string_view name);  // "completions" | "chat" (or their /v1/... paths)
std::string api_path(ApiKind api);              // "/v1/completions" | "/v1/chat/completions"

struct BaseUrl {
  std::string scheme_host_port;  // "http://127.0.0.1:8080"
  std::string path_prefix;       // "" or "/proxy", without a trailing slash
};
BaseUrl parse_base_url(const std::string& url);  // Error when there is no http(s) scheme or host

nlohmann::json request_body(const Endpoint& endpoint, const RequestSpec& request);

// One `data:` payload of the stream, read.
struct StreamChunk {
  std::string content;               // generated text (chat: content or reasoning_content)
  std::optional<int> prompt_tokens;  // from a usage object
  std::optional<int> completion_tokens;
  std::optional<std::string> error;  // an error object sent in the stream
};
StreamChunk parse_stream_chunk(const nlohmann::json& chunk, ApiKind api);

// The message of an error response body ({"error": {"message": ...}} or plain text), shortened.
std::string error_message_of(std::string_view body);

}  // namespace ridge::loadgen
