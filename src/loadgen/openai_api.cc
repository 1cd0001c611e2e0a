#include "loadgen/openai_api.h"

#include <algorithm>

#include "core/error.h"

namespace ridge::loadgen {
namespace {

using nlohmann::json;

std::optional<int> int_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<int>();
}

std::string string_field(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string shorten(std::string s) {
  constexpr size_t kMax = 200;
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

std::string message_of(const json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && error.contains("message")) return string_field(error, "message");
  return error.dump();
}

}  // namespace

ApiKind parse_api_kind(std::string_view name) {
  if (name == "completions" || name == "/v1/completions") return ApiKind::Completions;
  if (name == "chat" || name == "chat/completions" || name == "/v1/chat/completions") return ApiKind::Chat;
  fail("unknown endpoint '{}' (want completions or chat)", name);
}

std::string api_path(ApiKind api) { return api == ApiKind::Chat ? "/v1/chat/completions" : "/v1/completions"; }

BaseUrl parse_base_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0))
    fail("base URL '{}' needs an http:// or https:// scheme", url);
  const size_t path_start = url.find('/', scheme_end + 3);
  BaseUrl out{url.substr(0, path_start), path_start == std::string::npos ? "" : url.substr(path_start)};
  if (out.scheme_host_port.size() == scheme_end + 3) fail("base URL '{}' has no host", url);
  while (!out.path_prefix.empty() && out.path_prefix.back() == '/') out.path_prefix.pop_back();
  return out;
}

json request_body(const Endpoint& e, const RequestSpec& r) {
  json body = {{"model", e.model},
               {"max_tokens", r.max_tokens},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"temperature", e.temperature}};
  if (e.top_p < 1) body["top_p"] = e.top_p;
  if (e.ignore_eos) body["ignore_eos"] = true;
  if (e.api == ApiKind::Chat) {
    body["messages"] = json::array();
    if (!r.prefix.empty()) body["messages"].push_back({{"role", "system"}, {"content", r.prefix}});
    body["messages"].push_back({{"role", "user"}, {"content", r.prompt}});
  } else {
    body["prompt"] = r.prefix.empty() ? r.prompt : r.prefix + " " + r.prompt;
  }
  return body;
}

StreamChunk parse_stream_chunk(const json& chunk, ApiKind api) {
  StreamChunk out;
  if (!chunk.is_object()) return out;
  if (chunk.contains("error")) {
    out.error = shorten(message_of(chunk["error"]));
    return out;
  }
  const auto choices = chunk.find("choices");
  if (choices != chunk.end() && choices->is_array() && !choices->empty() && (*choices)[0].is_object()) {
    const json& choice = (*choices)[0];
    if (api == ApiKind::Completions) {
      out.content = string_field(choice, "text");
    } else if (choice.contains("delta") && choice["delta"].is_object()) {
      const json& delta = choice["delta"];
      out.content = string_field(delta, "content") + string_field(delta, "reasoning_content");
    }
  }
  const auto usage = chunk.find("usage");
  if (usage != chunk.end() && usage->is_object()) {
    out.prompt_tokens = int_field(*usage, "prompt_tokens");
    out.completion_tokens = int_field(*usage, "completion_tokens");
  }
  return out;
}

std::string error_message_of(std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("error")) return shorten(message_of(parsed["error"]));
  return shorten(std::string(body));
}

}  // namespace ridge::loadgen
