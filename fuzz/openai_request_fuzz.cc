// libFuzzer target for the request parsers of the three HTTP APIs (see fuzz/README.md). The first
// byte picks the parser, the rest is the request body:
//   0: POST /v1/completions        parse_openai_request(Endpoint::Completions, body)
//   1: POST /v1/chat/completions   parse_openai_request(Endpoint::ChatCompletions, body)
//   2: POST /v1/messages           parse_anthropic_request(body, count_only = false)
//   3: POST /v1/messages/count_tokens  parse_anthropic_request(body, count_only = true)
//   4: POST /v1/responses          parse_responses_request(body, store); the store holds "resp_fuzz"
// (byte 0 % 5, bit 7 aside). With bit 7 set, byte 1 picks a value of some type (% 8: null, 0, -1,
// 1.5, "x", [], {}, true) and the body follows it: when the body is valid JSON, it is parsed again
// with each of its first 64 values (depth first) replaced in turn by that one, as a client sending
// the wrong type would -- a mutation byte-level fuzzing of a valid body rarely makes.
// A bad body must be an ApiError (the server's 400/404); a grammar the request names may be a
// GrammarError. Anything else escaping (a json::type_error, std::out_of_range, ...) is a server 500
// and aborts here, so the fuzzer reports it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "grammar/grammar.h"
#include "serve/anthropic_request.h"
#include "serve/api_error.h"
#include "serve/openai_request.h"
#include "serve/response_store.h"
#include "serve/responses_request.h"
#include "fuzz_common.h"

namespace {

ridge::ResponseStore& store() {
  // One earlier response with a tool call, so previous_response_id and function_call_output reach
  // the stored conversation. Never written after start-up: inputs do not affect each other.
  static ridge::ResponseStore* s = [] {
    auto* st = new ridge::ResponseStore(8);
    ridge::ChatMessage user{"user", "What is the weather in Paris?", {}, {}};
    ridge::ChatMessage call{"assistant", "", {{"call_fuzz", "get_weather", R"({"city":"Paris"})"}}, {}};
    ridge::ChatMessage result{"tool", "sunny", {}, "call_fuzz"};
    st->put("resp_fuzz", {user, call, result, {"assistant", "It is sunny.", {}, {}}});
    return st;
  }();
  return *s;
}

// Touch what the parse produced, so a dangling or uninitialised field shows under the sanitizers.
size_t touch(const ridge::OpenaiRequest& r) {
  size_t n = r.model.size() + r.stop.size() + r.tools.size() + r.structured.source.size();
  for (const auto& p : r.prompts) n += p.text.size() + p.tokens.size();
  for (const auto& m : r.messages) {
    n += m.role.size() + m.content.size() + m.tool_call_id.size();
    for (const auto& c : m.tool_calls) n += c.id.size() + c.name.size() + c.arguments.size();
  }
  if (r.responses) n += r.responses->id.size() + r.responses->conversation.size() + r.responses->echo.dump().size();
  return n;
}

void parse(uint8_t api, std::string_view body) {
  try {
    ridge::OpenaiRequest r;
    switch (api % 5) {
      case 0: r = ridge::parse_openai_request(ridge::Endpoint::Completions, body); break;
      case 1: r = ridge::parse_openai_request(ridge::Endpoint::ChatCompletions, body); break;
      case 2: r = ridge::parse_anthropic_request(body); break;
      case 3: r = ridge::parse_anthropic_request(body, /*count_only=*/true); break;
      default: r = ridge::parse_responses_request(body, store()); break;
    }
    volatile size_t sink = touch(r);
    (void)sink;
    ridge::fuzz::accepted(r.structured.empty() ? "request" : r.structured.describe().c_str());
  } catch (const ridge::ApiError& e) {
    ridge::fuzz::rejected(e);
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  } catch (const ridge::grammar::GrammarError& e) {
    ridge::fuzz::rejected(e);
  }
}

// Every value of `j` in depth-first order (the root first), at most `max`.
void values(nlohmann::ordered_json& j, std::vector<nlohmann::ordered_json*>& out, size_t max) {
  if (out.size() >= max) return;
  out.push_back(&j);
  if (j.is_structured())
    for (auto& child : j) values(child, out, max);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t api = data[0] & 0x7f;
  if (!(data[0] & 0x80)) {
    parse(api, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    return 0;
  }
  if (size < 2) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);
  auto j = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  static const nlohmann::ordered_json kValues[] = {nullptr, 0, -1, 1.5, "x", nlohmann::ordered_json::array(),
                                                    nlohmann::ordered_json::object(), true};
  std::vector<nlohmann::ordered_json*> all;
  values(j, all, 64);
  for (nlohmann::ordered_json* v : all) {
    nlohmann::ordered_json kept = std::exchange(*v, kValues[data[1] % 8]);
    parse(api, j.dump());
    *v = std::move(kept);
  }
  return 0;
}
