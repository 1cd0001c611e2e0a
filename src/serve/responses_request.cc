#include "serve/responses_request.h"

#include <limits>
#include <set>

#include <fmt/format.h>

#include "serve/api_error.h"
#include "serve/random_id.h"
#include "serve/request_fields.h"
#include "serve/structured_output.h"

namespace ridge {
namespace {

using request_fields::Json;
using request_fields::member;
using request_fields::number_field;
using request_fields::string_field;

// A message's content: a string, or parts of type input_text / output_text (refusal, images refused).
std::string message_text(const Json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw_bad_param(where, fmt::format("'{}' must be a string or a list of content parts", where));
  std::string text;
  for (size_t k = 0; k < content.size(); ++k) {
    const Json& part = content[k];
    const std::string at = fmt::format("{}[{}]", where, k);
    const Json* type = part.is_object() ? member(part, "type") : nullptr;
    if (!type || !type->is_string()) throw_bad_param(at, fmt::format("'{}' must be a content part with a 'type'", at));
    if (*type != "input_text" && *type != "output_text" && *type != "text")
      throw_bad_param(at + ".type", fmt::format("content parts of type '{}' are not supported here", type->get<std::string>()));
    if (!text.empty()) text += "\n";
    text += string_field(part, "text", at + ".text");
  }
  return text;
}

// input items to chat messages: consecutive function_call items join one assistant turn;
// function_call_output items name a call made earlier (in this input or the stored conversation).
void read_input(const Json& input, std::vector<ChatMessage>& out) {
  if (input.is_string()) {
    out.push_back(ChatMessage{"user", input.get<std::string>(), {}, {}});
    return;
  }
  if (!input.is_array() || input.empty()) throw_bad_param("input", "'input' must be a string or a non-empty list of items");
  std::set<std::string> call_ids;
  for (const auto& m : out)
    for (const auto& c : m.tool_calls) call_ids.insert(c.id);
  for (size_t i = 0; i < input.size(); ++i) {
    const Json& item = input[i];
    const std::string where = fmt::format("input[{}]", i);
    if (!item.is_object()) throw_bad_param(where, fmt::format("'{}' must be an object", where));
    const Json* type_field = member(item, "type");
    if (type_field && !type_field->is_string()) throw_bad_param(where + ".type", fmt::format("'{}.type' must be a string", where));
    const std::string type = type_field ? type_field->get<std::string>() : "message";
    if (type == "message") {
      std::string role = string_field(item, "role", where + ".role");
      if (role == "developer") role = "system";
      if (role != "user" && role != "assistant" && role != "system")
        throw_bad_param(where + ".role", fmt::format("'{}.role' must be user, assistant, system or developer", where));
      const Json* content = member(item, "content");
      if (!content) throw_bad_param(where + ".content", fmt::format("'{}.content' is required", where));
      out.push_back(ChatMessage{role, message_text(*content, where + ".content"), {}, {}});
    } else if (type == "function_call") {
      ChatToolCall call;
      call.id = string_field(item, "call_id", where + ".call_id");
      call.name = string_field(item, "name", where + ".name");
      call.arguments = string_field(item, "arguments", where + ".arguments");
      call_ids.insert(call.id);
      if (out.empty() || out.back().role != "assistant" || (!out.back().content.empty() && out.back().tool_calls.empty()))
        out.push_back(ChatMessage{"assistant", "", {}, {}});
      out.back().tool_calls.push_back(std::move(call));
    } else if (type == "function_call_output") {
      const std::string id = string_field(item, "call_id", where + ".call_id");
      if (!call_ids.count(id))
        throw_bad_param(where + ".call_id", fmt::format("function_call_output for '{}', which no earlier function_call has as its call_id", id));
      const Json* output = member(item, "output");
      if (!output) throw_bad_param(where + ".output", fmt::format("'{}.output' is required", where));
      out.push_back(ChatMessage{"tool", output->is_string() ? output->get<std::string>() : message_text(*output, where + ".output"), {}, id});
    } else if (type != "reasoning") {  // earlier thinking: the templates drop it
      throw_bad_param(where + ".type", fmt::format("input items of type '{}' are not supported", type));
    }
  }
}

void read_tools(const Json& body, OpenaiRequest& r) {
  if (const Json* tools = member(body, "tools")) {
    if (!tools->is_array()) throw_bad_param("tools", "'tools' must be a list");
    std::set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
      const Json& t = (*tools)[i];
      const std::string where = fmt::format("tools[{}]", i);
      if (!t.is_object() || !member(t, "type") || t["type"] != "function")
        throw_bad_param(where + ".type", fmt::format("'{}.type' must be \"function\" (built-in tools are not supported)", where));
      std::string name = string_field(t, "name", where + ".name");
      if (name.empty() || !names.insert(name).second)
        throw_bad_param(where + ".name", fmt::format("tool names must be non-empty and unique ('{}')", name));
      const Json* parameters = member(t, "parameters");
      if (parameters && !parameters->is_object())
        throw_bad_param(where + ".parameters", fmt::format("'{}.parameters' must be a JSON schema object", where));
      r.tools.push_back(request_fields::function_tool(
          std::move(name), member(t, "description"),
          parameters ? *parameters : Json{{"type", "object"}, {"properties", Json::object()}}));
    }
  }
  using Mode = chat::ToolChoice::Mode;
  r.tool_choice.mode = r.tools.empty() ? Mode::kNone : Mode::kAuto;
  if (const Json* choice = member(body, "tool_choice")) {
    if (choice->is_string() && (*choice == "auto" || *choice == "none" || *choice == "required")) {
      r.tool_choice.mode = *choice == "auto" ? Mode::kAuto : *choice == "none" ? Mode::kNone : Mode::kRequired;
    } else if (choice->is_object() && member(*choice, "type") && (*choice)["type"] == "function") {
      r.tool_choice.mode = Mode::kNamed;
      r.tool_choice.name = string_field(*choice, "name", "tool_choice.name");
      request_fields::require_offered(r.tools, r.tool_choice.name, "tool_choice");
    } else {
      throw_bad_param("tool_choice", "'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...}");
    }
    if (r.tools.empty() && r.tool_choice.mode != Mode::kNone) throw_bad_param("tool_choice", "'tool_choice' needs 'tools'");
  }
  if (const Json* parallel = member(body, "parallel_tool_calls")) {
    if (!parallel->is_boolean()) throw_bad_param("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
    r.parallel_tool_calls = parallel->get<bool>();
  }
}

// text.format as response_format: {"type": "json_schema", "name", "schema", "strict"} or json_object.
void read_text_format(const Json& body, OpenaiRequest& r) {
  const Json* text = member(body, "text");
  const Json* format = text && text->is_object() ? member(*text, "format") : nullptr;
  if (!format) {  // ridge's structured-output fields (grammar, guided_*) as extensions
    r.structured = read_structured_output(body);
    return;
  }
  if (!format->is_object()) throw_bad_param("text.format", "'text.format' must be an object");
  const std::string type = member(*format, "type") ? string_field(*format, "type", "text.format.type") : "text";
  Json equivalent;
  if (type == "json_schema") {
    const Json* schema = member(*format, "schema");
    if (!schema) throw_bad_param("text.format.schema", "'text.format.schema' is required for json_schema");
    const std::string name = member(*format, "name") ? string_field(*format, "name", "text.format.name") : "response";
    equivalent["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", name}, {"schema", *schema}}}};
  } else if (type == "json_object") {
    equivalent["response_format"] = {{"type", "json_object"}};
  } else if (type != "text") {
    throw_bad_param("text.format.type", "'text.format.type' must be text, json_schema or json_object");
  }
  try {
    r.structured = read_structured_output(equivalent);
  } catch (ApiError& e) {
    e.param = "text.format";
    throw;
  }
}

}  // namespace

OpenaiRequest parse_responses_request(std::string_view text, ResponseStore& store) {
  const Json body = request_fields::parse_body(text);
  OpenaiRequest r;
  r.endpoint = Endpoint::ChatCompletions;
  r.api = Api::kResponses;
  auto context = std::make_shared<ResponsesContext>();
  context->id = random_id("resp_");
  if (const Json* model = member(body, "model")) {
    if (!model->is_string()) throw_bad_param("model", "'model' must be a string");
    r.model = model->get<std::string>();
  }
  if (const Json* previous = member(body, "previous_response_id")) {
    if (!previous->is_string()) throw_bad_param("previous_response_id", "'previous_response_id' must be a string");
    auto earlier = store.get(previous->get<std::string>());
    if (!earlier)
      throw ApiError(404, fmt::format("Previous response with id '{}' not found (never stored, stored with store: false, or "
                                      "dropped from the server's bounded store).", previous->get<std::string>()),
                     "previous_response_id", "previous_response_not_found");
    context->conversation = std::move(*earlier);
  }
  const Json* input = member(body, "input");
  if (!input) throw_bad_param("input", "'input' is required");
  read_input(*input, context->conversation);
  if (const Json* instructions = member(body, "instructions")) {
    if (!instructions->is_string()) throw_bad_param("instructions", "'instructions' must be a string");
    r.messages.push_back(ChatMessage{"system", instructions->get<std::string>(), {}, {}});
  }
  r.messages.insert(r.messages.end(), context->conversation.begin(), context->conversation.end());
  read_tools(body, r);
  read_text_format(body, r);
  if (!r.structured.empty() && (r.tool_choice.mode == chat::ToolChoice::Mode::kRequired ||
                                r.tool_choice.mode == chat::ToolChoice::Mode::kNamed))
    throw_bad_param("tool_choice", "a 'tool_choice' that requires a call cannot be combined with 'text.format'");
  if (const Json* max = member(body, "max_output_tokens")) {
    if (!max->is_number_integer() || max->get<int64_t>() < 1 || max->get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw_bad_param("max_output_tokens", "'max_output_tokens' must be a positive integer");
    r.max_tokens = max->get<int64_t>();
  }
  r.sampling.temperature = float(number_field(body, "temperature", 0, 2, 1.0));
  r.sampling.top_p = float(number_field(body, "top_p", 0, 1, 1.0));
  if (r.sampling.top_p <= 0) throw_bad_param("top_p", "'top_p' must be greater than 0");
  if (const Json* bias = member(body, "logit_bias")) r.sampling.logit_bias = request_fields::logit_bias(*bias);
  if (const Json* stream = member(body, "stream")) {
    if (!stream->is_boolean()) throw_bad_param("stream", "'stream' must be a boolean");
    r.stream = stream->get<bool>();
  }
  if (const Json* s = member(body, "store")) {
    if (!s->is_boolean()) throw_bad_param("store", "'store' must be a boolean");
    context->store = s->get<bool>();
  }
  context->response_store = &store;
  for (const char* key : {"instructions", "tools", "tool_choice", "text", "temperature", "top_p", "max_output_tokens",
                          "previous_response_id", "metadata", "parallel_tool_calls", "user"})
    if (const Json* v = member(body, key)) context->echo[key] = *v;
  context->echo["store"] = context->store;
  r.responses = std::move(context);
  return r;
}

}  // namespace ridge
