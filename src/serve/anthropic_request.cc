#include "serve/anthropic_request.h"

#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "serve/request_fields.h"
#include "serve/structured_output.h"

namespace ridge {
namespace {

using request_fields::Json;
using request_fields::member;
using request_fields::number_field;
using request_fields::string_field;

std::optional<int64_t> integer_field(const Json& body, const char* name, int64_t lo, int64_t hi) {
  const Json* v = member(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi)
    throw_bad_param(name, fmt::format("'{}' must be an integer between {} and {}", name, lo, hi));
  return v->get<int64_t>();
}

// A block list's text blocks joined; other block types are refused (images, documents) or skipped
// (thinking: the templates drop earlier turns' thinking).
std::string text_of_blocks(const Json& blocks, const std::string& where) {
  if (blocks.is_string()) return blocks.get<std::string>();
  if (!blocks.is_array()) throw_bad_param(where, fmt::format("'{}' must be a string or a list of content blocks", where));
  std::string text;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Json& b = blocks[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    if (!b.is_object() || !member(b, "type") || !b["type"].is_string())
      throw_bad_param(at, fmt::format("'{}' must be a content block with a 'type'", at));
    const std::string type = b["type"].get<std::string>();
    if (type == "text") {
      if (!text.empty()) text += "\n";
      text += string_field(b, "text", at + ".text");
    } else if (type != "thinking" && type != "redacted_thinking") {
      throw_bad_param(at + ".type", fmt::format("content blocks of type '{}' are not supported here", type));
    }
  }
  return text;
}

void read_system(const Json& body, OpenaiRequest& r) {
  const Json* system = member(body, "system");
  if (!system) return;
  const std::string text = text_of_blocks(*system, "system");
  if (!text.empty()) r.messages.push_back(ChatMessage{"system", text, {}, {}});
}

// A user turn: tool_result blocks become tool messages (in order, first), the rest one user message.
void read_user_turn(const Json& content, size_t i, const std::set<std::string>& call_ids, OpenaiRequest& r) {
  const std::string where = fmt::format("messages[{}].content", i);
  if (content.is_string()) {
    r.messages.push_back(ChatMessage{"user", content.get<std::string>(), {}, {}});
    return;
  }
  if (!content.is_array()) throw_bad_param(where, fmt::format("'{}' must be a string or a list of content blocks", where));
  Json rest = Json::array();
  for (size_t k = 0; k < content.size(); ++k) {
    const Json& b = content[k];
    const std::string at = fmt::format("{}[{}]", where, k);
    if (!b.is_object() || !member(b, "type") || !b["type"].is_string())
      throw_bad_param(at, fmt::format("'{}' must be a content block with a 'type'", at));
    if (b["type"] != "tool_result") {
      rest.push_back(b);
      continue;
    }
    ChatMessage result{"tool", "", {}, string_field(b, "tool_use_id", at + ".tool_use_id")};
    if (!call_ids.count(result.tool_call_id))
      throw_bad_param(at + ".tool_use_id",
                      fmt::format("tool_result block for '{}', which no earlier tool_use block has as its id", result.tool_call_id));
    if (const Json* c = member(b, "content")) result.content = text_of_blocks(*c, at + ".content");
    r.messages.push_back(std::move(result));
  }
  if (!rest.empty()) r.messages.push_back(ChatMessage{"user", text_of_blocks(rest, where), {}, {}});
}

// An assistant turn: text blocks are its content, tool_use blocks its calls.
void read_assistant_turn(const Json& content, size_t i, std::set<std::string>& call_ids, OpenaiRequest& r) {
  const std::string where = fmt::format("messages[{}].content", i);
  ChatMessage m{"assistant", "", {}, {}};
  if (content.is_string()) {
    m.content = content.get<std::string>();
  } else if (content.is_array()) {
    Json texts = Json::array();
    for (size_t k = 0; k < content.size(); ++k) {
      const Json& b = content[k];
      const std::string at = fmt::format("{}[{}]", where, k);
      if (!b.is_object() || !member(b, "type") || b["type"] != "tool_use") {
        texts.push_back(b);
        continue;
      }
      ChatToolCall call;
      call.id = string_field(b, "id", at + ".id");
      call.name = string_field(b, "name", at + ".name");
      const Json* input = member(b, "input");
      if (input && !input->is_object()) throw_bad_param(at + ".input", fmt::format("'{}.input' must be an object", at));
      call.arguments = input ? input->dump() : "{}";
      call_ids.insert(call.id);
      m.tool_calls.push_back(std::move(call));
    }
    m.content = text_of_blocks(texts, where);
  } else {
    throw_bad_param(where, fmt::format("'{}' must be a string or a list of content blocks", where));
  }
  r.messages.push_back(std::move(m));
}

void read_messages(const Json& body, OpenaiRequest& r) {
  const Json* messages = member(body, "messages");
  if (!messages || !messages->is_array() || messages->empty())
    throw_bad_param("messages", "'messages' must be a non-empty list");
  std::set<std::string> call_ids;
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) throw_bad_param(where, "each message must be an object");
    const std::string role = string_field(m, "role", where + ".role");
    const Json* content = member(m, "content");
    if (!content) throw_bad_param(where + ".content", fmt::format("'{}.content' is required", where));
    if (role == "user") {
      read_user_turn(*content, i, call_ids, r);
    } else if (role == "assistant") {
      read_assistant_turn(*content, i, call_ids, r);
    } else {
      throw_bad_param(where + ".role", fmt::format("'{}.role' must be \"user\" or \"assistant\" (system goes in 'system')", where));
    }
  }
}

void read_tools(const Json& body, OpenaiRequest& r) {
  const Json* tools = member(body, "tools");
  if (tools) {
    if (!tools->is_array()) throw_bad_param("tools", "'tools' must be a list");
    std::set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
      const Json& t = (*tools)[i];
      const std::string where = fmt::format("tools[{}]", i);
      if (!t.is_object()) throw_bad_param(where, fmt::format("'{}' must be an object", where));
      if (const Json* type = member(t, "type"); type && *type != "custom")
        throw_bad_param(where + ".type", fmt::format("server tools ('{}') are not supported; give 'name' and 'input_schema'",
                                                     type->is_string() ? type->get<std::string>() : type->dump()));
      std::string name = string_field(t, "name", where + ".name");
      if (name.empty() || !names.insert(name).second)
        throw_bad_param(where + ".name", fmt::format("tool names must be non-empty and unique ('{}')", name));
      const Json* schema = member(t, "input_schema");
      if (!schema || !schema->is_object())
        throw_bad_param(where + ".input_schema", fmt::format("'{}.input_schema' must be a JSON schema object", where));
      const Json* description = member(t, "description");
      if (description && !description->is_string())
        throw_bad_param(where + ".description", fmt::format("'{}.description' must be a string", where));
      r.tools.push_back(request_fields::function_tool(std::move(name), description, *schema));
    }
  }
  using Mode = chat::ToolChoice::Mode;
  r.tool_choice.mode = r.tools.empty() ? Mode::kNone : Mode::kAuto;
  const Json* choice = member(body, "tool_choice");
  if (!choice) return;
  if (!choice->is_object() || !member(*choice, "type") || !(*choice)["type"].is_string())
    throw_bad_param("tool_choice", "'tool_choice' must be an object with a 'type'");
  const std::string type = (*choice)["type"].get<std::string>();
  if (type == "auto") {
    r.tool_choice.mode = Mode::kAuto;
  } else if (type == "any") {
    r.tool_choice.mode = Mode::kRequired;
  } else if (type == "none") {
    r.tool_choice.mode = Mode::kNone;
  } else if (type == "tool") {
    r.tool_choice.mode = Mode::kNamed;
    r.tool_choice.name = string_field(*choice, "name", "tool_choice.name");
    request_fields::require_offered(r.tools, r.tool_choice.name, "tool_choice.name");
  } else {
    throw_bad_param("tool_choice.type", "'tool_choice.type' must be \"auto\", \"any\", \"tool\" or \"none\"");
  }
  if (r.tools.empty() && r.tool_choice.mode != Mode::kNone) throw_bad_param("tool_choice", "'tool_choice' needs 'tools'");
  if (const Json* p = member(*choice, "disable_parallel_tool_use")) {
    if (!p->is_boolean()) throw_bad_param("tool_choice.disable_parallel_tool_use", "'disable_parallel_tool_use' must be a boolean");
    r.parallel_tool_calls = !p->get<bool>();
  }
}

void read_thinking(const Json& body, OpenaiRequest& r) {
  const Json* thinking = member(body, "thinking");
  if (!thinking) return;
  if (!thinking->is_object() || !member(*thinking, "type") || !(*thinking)["type"].is_string())
    throw_bad_param("thinking", "'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": N} or {\"type\": \"disabled\"}");
  const std::string type = (*thinking)["type"].get<std::string>();
  if (type == "disabled") {
    r.enable_thinking = false;
  } else if (type == "enabled") {
    r.enable_thinking = true;
    if (auto budget = integer_field(*thinking, "budget_tokens", 1, std::numeric_limits<int32_t>::max()))
      r.reasoning_budget = int32_t(*budget);
  } else {
    throw_bad_param("thinking.type", "'thinking.type' must be \"enabled\" or \"disabled\"");
  }
}

}  // namespace

OpenaiRequest parse_anthropic_request(std::string_view text, bool count_only) {
  const Json body = request_fields::parse_body(text);
  OpenaiRequest r;
  r.endpoint = Endpoint::ChatCompletions;
  r.api = Api::kAnthropic;
  if (const Json* model = member(body, "model")) {
    if (!model->is_string()) throw_bad_param("model", "'model' must be a string");
    r.model = model->get<std::string>();
  }
  read_system(body, r);
  read_messages(body, r);
  read_tools(body, r);
  read_thinking(body, r);
  const auto max_tokens = integer_field(body, "max_tokens", 1, std::numeric_limits<int32_t>::max());
  if (!max_tokens && !count_only) throw_bad_param("max_tokens", "'max_tokens' is required");
  r.max_tokens = max_tokens;
  SamplingParams& s = r.sampling;
  s.temperature = float(number_field(body, "temperature", 0, 2, 1.0));  // Anthropic's default is 1
  s.top_p = float(number_field(body, "top_p", 0, 1, 1.0));
  if (s.top_p <= 0) throw_bad_param("top_p", "'top_p' must be greater than 0");
  s.top_k = int32_t(integer_field(body, "top_k", 0, std::numeric_limits<int32_t>::max()).value_or(0));
  if (const Json* stops = member(body, "stop_sequences")) {
    if (!stops->is_array()) throw_bad_param("stop_sequences", "'stop_sequences' must be a list of strings");
    for (const auto& stop : *stops) {
      if (!stop.is_string()) throw_bad_param("stop_sequences", "'stop_sequences' must be a list of strings");
      r.stop.push_back(stop.get<std::string>());
    }
  }
  // ridge's sampling and structured-output fields (logit_bias; grammar, response_format, guided_*) as
  // extensions (extra_body).
  if (const Json* bias = member(body, "logit_bias")) r.sampling.logit_bias = request_fields::logit_bias(*bias);
  r.structured = read_structured_output(body);
  const bool forced = r.tool_choice.mode == chat::ToolChoice::Mode::kRequired || r.tool_choice.mode == chat::ToolChoice::Mode::kNamed;
  if (forced && !r.structured.empty())
    throw_bad_param("tool_choice", "a 'tool_choice' that requires a call cannot be combined with a grammar");
  if (const Json* stream = member(body, "stream")) {
    if (!stream->is_boolean()) throw_bad_param("stream", "'stream' must be a boolean");
    r.stream = stream->get<bool>();
  }
  return r;
}

}  // namespace ridge
