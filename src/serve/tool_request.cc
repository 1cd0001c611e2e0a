#include "serve/tool_request.h"

#include <set>

#include <fmt/format.h>

#include "serve/api_error.h"

namespace ridge {
namespace {

using Json = nlohmann::ordered_json;

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

const Json* member(const Json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

chat::Tool read_tool(const Json& item, size_t i) {
  const std::string where = fmt::format("tools[{}]", i);
  if (!item.is_object()) throw_bad_param(where, fmt::format("'{}' must be an object", where));
  const Json* type = member(item, "type");
  if (!type || !type->is_string() || *type != "function")
    throw_bad_param(where + ".type", fmt::format("'{}.type' must be \"function\"", where));
  const Json* function = member(item, "function");
  if (!function || !function->is_object())
    throw_bad_param(where + ".function", fmt::format("'{}.function' must be an object", where));
  chat::Tool tool;
  const Json* name = member(*function, "name");
  if (!name || !name->is_string() || !valid_function_name(name->get<std::string>()))
    throw_bad_param(where + ".function.name",
                    fmt::format("'{}.function.name' must be 1 to 64 letters, digits, '_' or '-'", where));
  tool.name = name->get<std::string>();
  if (const Json* d = member(*function, "description"); d && !d->is_string())
    throw_bad_param(where + ".function.description", fmt::format("'{}.function.description' must be a string", where));
  const Json* parameters = member(*function, "parameters");
  if (parameters && !parameters->is_object())
    throw_bad_param(where + ".function.parameters", fmt::format("'{}.function.parameters' must be a JSON schema object", where));
  tool.parameters = parameters ? *parameters : Json{{"type", "object"}, {"properties", Json::object()}};
  tool.function = *function;
  tool.definition = item;
  return tool;
}

chat::ToolChoice read_tool_choice(const Json& v, const std::vector<chat::Tool>& tools) {
  using Mode = chat::ToolChoice::Mode;
  chat::ToolChoice choice;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "none") {
      choice.mode = Mode::kNone;
    } else if (s == "auto") {
      choice.mode = Mode::kAuto;
    } else if (s == "required") {
      choice.mode = Mode::kRequired;
    } else {
      throw_bad_param("tool_choice", "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
  } else if (v.is_object()) {
    const Json* function = member(v, "function");
    const Json* name = function && function->is_object() ? member(*function, "name") : nullptr;
    if (!name || !name->is_string())
      throw_bad_param("tool_choice", "'tool_choice' must name a function: {\"type\": \"function\", \"function\": {\"name\": ...}}");
    choice.mode = Mode::kNamed;
    choice.name = name->get<std::string>();
    bool known = false;
    for (const auto& t : tools) known = known || t.name == choice.name;
    if (!known) throw_bad_param("tool_choice", fmt::format("'tool_choice' names '{}', which is not in 'tools'", choice.name));
  } else {
    throw_bad_param("tool_choice", "'tool_choice' must be a string or an object");
  }
  if (tools.empty() && choice.mode != Mode::kNone)
    throw_bad_param("tool_choice", "'tool_choice' needs 'tools'");
  return choice;
}

std::string arguments_text(const Json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object()) return v.dump();  // some clients send the object itself
  throw_bad_param(where, fmt::format("'{}' must be a JSON string (or an object)", where));
}

std::vector<ChatToolCall> read_message_calls(const Json& calls, size_t i) {
  const std::string where = fmt::format("messages[{}].tool_calls", i);
  if (!calls.is_array()) throw_bad_param(where, fmt::format("'{}' must be a list", where));
  std::vector<ChatToolCall> out;
  for (size_t c = 0; c < calls.size(); ++c) {
    const std::string at = fmt::format("{}[{}]", where, c);
    const Json& call = calls[c];
    const Json* function = call.is_object() ? member(call, "function") : nullptr;
    if (!function || !function->is_object()) throw_bad_param(at, fmt::format("'{}' needs a 'function' object", at));
    const Json* name = member(*function, "name");
    if (!name || !name->is_string()) throw_bad_param(at + ".function.name", fmt::format("'{}.function.name' must be a string", at));
    ChatToolCall parsed;
    parsed.name = name->get<std::string>();
    const Json* arguments = member(*function, "arguments");
    parsed.arguments = arguments ? arguments_text(*arguments, at + ".function.arguments") : "{}";
    if (const Json* id = member(call, "id")) {
      if (!id->is_string()) throw_bad_param(at + ".id", fmt::format("'{}.id' must be a string", at));
      parsed.id = id->get<std::string>();
    }
    out.push_back(std::move(parsed));
  }
  return out;
}

}  // namespace

void read_tool_fields(const Json& body, OpenaiRequest& r) {
  if (const Json* tools = member(body, "tools")) {
    if (!tools->is_array()) throw_bad_param("tools", "'tools' must be a list");
    std::set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
      chat::Tool tool = read_tool((*tools)[i], i);
      if (!names.insert(tool.name).second)
        throw_bad_param(fmt::format("tools[{}].function.name", i), fmt::format("two tools are named '{}'", tool.name));
      r.tools.push_back(std::move(tool));
    }
  }
  r.tool_choice.mode = r.tools.empty() ? chat::ToolChoice::Mode::kNone : chat::ToolChoice::Mode::kAuto;
  if (const Json* choice = member(body, "tool_choice")) r.tool_choice = read_tool_choice(*choice, r.tools);
  if (const Json* parallel = member(body, "parallel_tool_calls")) {
    if (!parallel->is_boolean()) throw_bad_param("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
    r.parallel_tool_calls = parallel->get<bool>();
  }
  const Json* messages = member(body, "messages");
  if (!messages || !messages->is_array()) return;
  for (size_t i = 0; i < messages->size() && i < r.messages.size(); ++i) {
    const Json& m = (*messages)[i];
    if (const Json* calls = member(m, "tool_calls")) r.messages[i].tool_calls = read_message_calls(*calls, i);
    if (const Json* id = member(m, "tool_call_id")) {
      if (!id->is_string())
        throw_bad_param(fmt::format("messages[{}].tool_call_id", i), fmt::format("'messages[{}].tool_call_id' must be a string", i));
      r.messages[i].tool_call_id = id->get<std::string>();
    }
    if (!r.messages[i].tool_calls.empty() && r.messages[i].role != "assistant")
      throw_bad_param(fmt::format("messages[{}].tool_calls", i), "only assistant messages carry 'tool_calls'");
  }
}

}  // namespace ridge
