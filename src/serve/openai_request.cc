#include "serve/openai_request.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "serve/request_fields.h"
#include "serve/structured_output.h"
#include "serve/tool_request.h"

namespace ridge {
namespace {

using nlohmann::json;

// Typed access to the optional fields of the request object. A field that is absent or null is
// "not given" (OpenAI's clients send null for unset parameters).
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {}

  const json* find(const char* name) const {
    auto it = body_.find(name);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<double> number(const char* name, double lo, double hi) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw_bad_param(name, fmt::format("'{}' must be a number", name));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
      throw_bad_param(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, x));
    return x;
  }

  std::optional<int64_t> integer(const char* name, int64_t lo, int64_t hi) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    int64_t x = 0;
    if (v->is_number_unsigned()) {
      const uint64_t u = v->get<uint64_t>();
      x = u > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : int64_t(u);
    } else if (v->is_number_integer()) {
      x = v->get<int64_t>();
    } else if (v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>() &&
               std::abs(v->get<double>()) < 9e18) {
      x = int64_t(v->get<double>());  // 16.0 is read as 16, as Python clients may send it
    } else {
      throw_bad_param(name, fmt::format("'{}' must be an integer", name));
    }
    if (x < lo || x > hi) throw_bad_param(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, x));
    return x;
  }

  std::optional<bool> boolean(const char* name) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw_bad_param(name, fmt::format("'{}' must be a boolean", name));
    return v->get<bool>();
  }

  std::optional<std::string> string(const char* name) const {
    const json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw_bad_param(name, fmt::format("'{}' must be a string", name));
    return v->get<std::string>();
  }

 private:
  const json& body_;
};

std::vector<int32_t> token_list(const json& list, const char* param) {
  std::vector<int32_t> tokens;
  for (const auto& t : list) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw_bad_param(param, "token ids in 'prompt' must be non-negative integers");
    tokens.push_back(int32_t(t.get<int64_t>()));
  }
  return tokens;
}

// prompt: "text", [1, 2, 3], or a batch: ["text", ...] or [[1, 2, 3], ...].
void read_prompt(const Fields& f, OpenaiRequest& r) {
  const json* p = f.find("prompt");
  if (!p) throw_bad_param("prompt", "'prompt' is required");
  constexpr const char* kShapes = "'prompt' must be a string, a list of token ids, or a list of either";
  if (p->is_string()) {
    r.prompts.push_back({p->get<std::string>(), {}, false});
    return;
  }
  if (!p->is_array() || p->empty()) throw_bad_param("prompt", kShapes);
  if ((*p)[0].is_number()) {
    r.prompts.push_back({{}, token_list(*p, "prompt"), true});
    return;
  }
  if (p->size() > kMaxPrompts) throw_bad_param("prompt", fmt::format("at most {} prompts per request", kMaxPrompts));
  for (const json& item : *p) {
    if (item.is_string()) {
      r.prompts.push_back({item.get<std::string>(), {}, false});
    } else if (item.is_array() && !item.empty()) {
      r.prompts.push_back({{}, token_list(item, "prompt"), true});
    } else {
      throw_bad_param("prompt", kShapes);
    }
  }
}

// content: "text", null (an assistant turn with tool calls), or a list of {"type": "text", "text": ...} parts.
std::string message_content(const json& message, size_t index) {
  const std::string param = fmt::format("messages[{}].content", index);
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) throw_bad_param(param, fmt::format("'{}' must be a string or a list of content parts", param));
  std::string text;
  for (const auto& part : *it) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") || !part["text"].is_string())
      throw_bad_param(param, fmt::format("'{}': only text content parts are supported", param));
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

void read_messages(const Fields& f, OpenaiRequest& r) {
  const json* m = f.find("messages");
  if (!m) throw_bad_param("messages", "'messages' is required");
  if (!m->is_array()) throw_bad_param("messages", "'messages' must be a list");
  if (m->empty()) throw_bad_param("messages", "'messages' must not be empty");
  for (size_t i = 0; i < m->size(); ++i) {
    const json& message = (*m)[i];
    if (!message.is_object()) throw_bad_param(fmt::format("messages[{}]", i), "each message must be an object");
    auto role = message.find("role");
    if (role == message.end() || !role->is_string())
      throw_bad_param(fmt::format("messages[{}].role", i), "each message needs a string 'role'");
    std::string name = role->get<std::string>();
    if (name == "developer") name = "system";
    if (name != "system" && name != "user" && name != "assistant" && name != "tool")
      throw_bad_param(fmt::format("messages[{}].role", i),
                      fmt::format("unsupported role '{}' (system, developer, user, assistant, tool)", name));
    r.messages.push_back(ChatMessage{name, message_content(message, i), {}, {}});
  }
}

void read_stop(const Fields& f, OpenaiRequest& r) {
  const json* s = f.find("stop");
  if (!s) return;
  if (s->is_string()) {
    r.stop.push_back(s->get<std::string>());
    return;
  }
  if (!s->is_array()) throw_bad_param("stop", "'stop' must be a string or a list of strings");
  for (const auto& item : *s) {
    if (!item.is_string()) throw_bad_param("stop", "'stop' must be a string or a list of strings");
    r.stop.push_back(item.get<std::string>());
  }
}

void read_sampling(const Fields& f, OpenaiRequest& r) {
  SamplingParams& s = r.sampling;
  constexpr double kBig = 1e9;
  s.temperature = float(f.number("temperature", 0, kBig).value_or(1.0));  // OpenAI's default is 1
  s.top_p = float(f.number("top_p", 0, 1).value_or(1.0));
  if (s.top_p <= 0) throw_bad_param("top_p", "'top_p' must be greater than 0");
  const int64_t top_k = f.integer("top_k", -1, std::numeric_limits<int32_t>::max()).value_or(0);
  s.top_k = int32_t(top_k < 0 ? 0 : top_k);  // -1 turns it off, as in vLLM
  s.min_p = float(f.number("min_p", 0, 1).value_or(0.0));
  s.presence_penalty = float(f.number("presence_penalty", -2, 2).value_or(0.0));
  s.frequency_penalty = float(f.number("frequency_penalty", -2, 2).value_or(0.0));
  s.repetition_penalty = float(f.number("repetition_penalty", 0, kBig).value_or(1.0));
  if (s.repetition_penalty <= 0) throw_bad_param("repetition_penalty", "'repetition_penalty' must be greater than 0");
  if (auto seed = f.integer("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()))
    r.seed = uint64_t(*seed);
}

void read_logprobs(const Fields& f, OpenaiRequest& r) {
  if (r.endpoint == Endpoint::Completions) {
    // logprobs: N -> the sampled token's logprob and the N most likely alternatives.
    if (auto n = f.integer("logprobs", 0, kMaxTopLogprobs)) {
      r.logprobs = true;
      r.sampling.top_logprobs = int32_t(*n);
    }
    return;
  }
  r.logprobs = f.boolean("logprobs").value_or(false);
  if (auto top = f.integer("top_logprobs", 0, kMaxTopLogprobs)) {
    if (!r.logprobs && *top > 0) throw_bad_param("top_logprobs", "'logprobs' must be true when 'top_logprobs' is used");
    r.sampling.top_logprobs = int32_t(*top);
  }
}

// echo (completions) and vLLM's prompt_logprobs (both endpoints).
void read_prompt_logprobs(const Fields& f, OpenaiRequest& r) {
  if (r.endpoint == Endpoint::Completions) r.echo = f.boolean("echo").value_or(false);
  else if (f.find("echo")) throw_bad_param("echo", "'echo' is for /v1/completions");
  if (auto n = f.integer("prompt_logprobs", 0, kMaxTopLogprobs)) r.prompt_logprobs = int32_t(*n);
  if ((r.echo || r.prompt_logprobs) && r.stream)
    throw_bad_param(r.echo ? "echo" : "prompt_logprobs", "prompt log-probabilities and echo are not streamed: send 'stream': false");
}

void read_stream(const Fields& f, OpenaiRequest& r) {
  r.stream = f.boolean("stream").value_or(false);
  const json* options = f.find("stream_options");
  if (!options) return;
  if (!options->is_object()) throw_bad_param("stream_options", "'stream_options' must be an object");
  if (!r.stream) throw_bad_param("stream_options", "'stream_options' is only allowed when 'stream' is true");
  r.include_usage = Fields(*options).boolean("include_usage").value_or(false);
}

void read_logit_bias(const Fields& f, OpenaiRequest& r) {
  if (const json* bias = f.find("logit_bias")) r.sampling.logit_bias = request_fields::logit_bias(*bias);
}

// Thinking models: chat_template_kwargs.enable_thinking (vLLM's and llama.cpp's), reasoning_format
// (llama.cpp's per-request override).
void read_thinking(const Fields& f, OpenaiRequest& r) {
  if (const json* kwargs = f.find("chat_template_kwargs")) {
    if (!kwargs->is_object()) throw_bad_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    if (auto enable = Fields(*kwargs).boolean("enable_thinking")) r.enable_thinking = *enable;
  }
  if (auto budget = f.integer("reasoning_budget", 1, std::numeric_limits<int32_t>::max())) r.reasoning_budget = int32_t(*budget);
  if (auto format = f.string("reasoning_format")) {
    r.reasoning_format = chat::reasoning_format_from_name(*format);
    if (!r.reasoning_format) throw_bad_param("reasoning_format", "'reasoning_format' must be \"none\" or \"separate\"");
  }
}

// Fields that change what a client gets back and that this server cannot honour.
void refuse_unsupported(const Fields& f, const OpenaiRequest& r) {
  auto refuse = [](const char* name) { throw_bad_param(name, fmt::format("'{}' is not supported by this server", name)); };
  if (auto best_of = f.integer("best_of", 1, kMaxChoices); best_of && *best_of != r.n) refuse("best_of");
  for (const char* name : {"suffix", "functions"}) {
    const json* v = f.find(name);
    if (v && !v->empty()) refuse(name);
  }
}

}  // namespace

OpenaiRequest parse_openai_request(Endpoint endpoint, std::string_view body) {
  json root;
  try {
    root = json::parse(body);
  } catch (const json::exception& e) {
    // nlohmann rejects invalid UTF-8 inside strings here too (parse_error), and a number literal
    // too large for a double (1e400) as out_of_range: both are the client's mistake.
    throw ApiError(400, fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!root.is_object()) throw ApiError(400, "the request body must be a JSON object");

  const Fields f(root);
  OpenaiRequest r;
  r.endpoint = endpoint;
  r.model = f.string("model").value_or("");
  if (endpoint == Endpoint::Completions) {
    read_prompt(f, r);
  } else {
    read_messages(f, r);
  }
  // max_completion_tokens is the newer name of max_tokens; it wins when both are sent.
  r.max_tokens = f.integer("max_completion_tokens", 1, std::numeric_limits<int32_t>::max());
  if (!r.max_tokens) r.max_tokens = f.integer("max_tokens", 1, std::numeric_limits<int32_t>::max());
  r.n = int32_t(f.integer("n", 1, kMaxChoices).value_or(1));
  read_sampling(f, r);
  read_stop(f, r);
  read_logprobs(f, r);
  read_stream(f, r);
  read_prompt_logprobs(f, r);
  read_logit_bias(f, r);
  r.ignore_eos = f.boolean("ignore_eos").value_or(false);
  // vLLM's: smaller runs first when the server schedules by priority (--priorities).
  r.priority = int32_t(f.integer("priority", std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()).value_or(0));
  r.jump_forward = f.boolean("jump_forward").value_or(true);
  r.user = f.string("user").value_or("");
  refuse_unsupported(f, r);
  const auto ordered = nlohmann::ordered_json::parse(body);
  r.structured = read_structured_output(ordered);
  if (endpoint == Endpoint::ChatCompletions) {
    read_thinking(f, r);
    read_tool_fields(ordered, r);
    const bool forced = r.tool_choice.mode == chat::ToolChoice::Mode::kRequired ||
                        r.tool_choice.mode == chat::ToolChoice::Mode::kNamed;
    if (forced && !r.structured.empty())
      throw_bad_param("tool_choice", "'tool_choice' that requires a call cannot be combined with 'response_format'");
  } else if (const json* tools = f.find("tools"); tools && !tools->empty()) {
    throw_bad_param("tools", "'tools' is for /v1/chat/completions");
  }
  return r;
}

bool OpenaiRequest::uses_tools() const {
  if (!tools.empty()) return true;
  for (const auto& m : messages)
    if (m.role == "tool" || !m.tool_calls.empty()) return true;
  return false;
}

}  // namespace ridge
