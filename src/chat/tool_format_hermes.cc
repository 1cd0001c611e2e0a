// NousResearch Hermes 2 Pro / Hermes 3: the tools inside <tools> in a fixed system turn, each with a
// description that spells its signature in Python types; calls and results as <tool_call> and
// <tool_response> blocks (results in a "tool" turn). Mirrors the template's text, including what
// Jinja makes of its json_to_python_type macro for schemas it does not foresee.
#include "chat/python_json.h"
#include "core/error.h"
#include "chat/tool_call_text.h"
#include "chat/tool_formats.h"

namespace ridge::chat {
namespace {

// The template's json_to_python_type(spec). An absent "type" is Jinja's Undefined, which is
// iterable and empty ("Union[]"); a string type not in the map iterates its characters.
std::string python_type(const Json& spec) {
  const Json* type = spec.is_object() && spec.contains("type") ? &spec.at("type") : nullptr;
  if (type && type->is_string()) {
    const std::string& t = type->get_ref<const std::string&>();
    if (t == "string") return "str";
    if (t == "number") return "float";
    if (t == "integer") return "int";
    if (t == "boolean") return "bool";
    if (t == "array") return "list[Union[]]";  // json_spec|items is a list of pairs: no .type
    if (t == "object") {
      if (spec.contains("additionalProperties")) return "dict[str, " + python_type(spec.at("additionalProperties")) + "]";
      return "dict";
    }
  }
  if (!type || type->is_string() || type->is_array() || type->is_object()) {  // iterable
    std::string out = "Union[";
    bool first = true;
    const auto add = [&](const Json& t) {
      if (!first) out += ",";
      first = false;
      out += python_type(Json{{"type", t}});
    };
    if (type && type->is_string()) {  // iterating its characters recurses without end in Jinja
      fail("the hermes chat template cannot render a parameter of type '{}'", type->get<std::string>());
    } else if (type && type->is_array()) {
      for (const Json& t : *type) add(t);
    } else if (type && type->is_object()) {
      for (const auto& [key, value] : type->items()) add(key);
    }
    return out + "]";
  }
  return "Any";
}

std::string jinja_text(const Json& v) {  // {{ value }} of a string (others as Python would print them)
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  return python_json(v);
}

std::string tool_line(const Tool& tool) {
  const Json& f = tool.function;
  const Json properties = tool.parameters.value("properties", Json::object());
  std::string out = "{\"type\": \"function\", \"function\": {\"name\": \"" + tool.name + "\", \"description\": \"" +
                    tool.name + "(";
  bool first = true;
  for (const auto& [param, fields] : properties.items()) {
    if (!first) out += ", ";
    first = false;
    out += param + ": " + python_type(fields);
  }
  out += ")";
  if (f.contains("return")) out += " -> " + python_type(f.at("return"));
  out += " - " + jinja_text(f.value("description", Json(""))) + "\n\n";
  first = true;
  for (const auto& [param, fields] : properties.items()) {
    if (first) out += "    Args:\n";
    first = false;
    const std::string description =
        fields.is_object() && fields.contains("description") ? trim_space(jinja_text(fields.at("description"))) : "";
    out += "        " + param + "(" + python_type(fields) + "): " + description;
  }
  if (f.contains("return") && f.at("return").is_object() && f.at("return").contains("description"))
    out += "\n    Returns:\n        " + jinja_text(f.at("return").at("description"));
  out += "\"";
  out += ", \"parameters\": ";
  out += properties.empty() ? "{}" : python_json(tool.parameters);
  out += "}";
  return out;
}

class HermesToolFormat final : public ToolCallTagFormat {
 public:
  std::string_view name() const override { return "hermes"; }

  std::string render(std::span<const ChatMessage> messages, std::span<const Tool> tools,
                     const ToolPromptOptions& options) const override {
    std::string out =
        "<|im_start|>system\nYou are a function calling AI model. You are provided with function signatures within "
        "<tools></tools> XML tags. You may call one or more functions to assist with the user query. Don't make "
        "assumptions about what values to plug into functions. Here are the available tools: <tools> ";
    for (size_t i = 0; i < tools.size(); ++i) {
      out += tool_line(tools[i]);
      if (i + 1 < tools.size()) out += "\n";
    }
    out += " </tools>";
    out +=
        "Use the following pydantic model json schema for each tool call you will make: {\"properties\": {\"name\": "
        "{\"title\": \"Name\", \"type\": \"string\"}, \"arguments\": {\"title\": \"Arguments\", \"type\": \"object\"}}, "
        "\"required\": [\"name\", \"arguments\"], \"title\": \"FunctionCall\", \"type\": \"object\"}}\n";
    out += "For each function call return a json object with function name and arguments within <tool_call></tool_call> "
           "XML tags as follows:\n";
    out += "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-dict>}\n</tool_call><|im_end|>\n";
    for (size_t i = 0; i < messages.size(); ++i) {
      const ChatMessage& m = messages[i];
      const bool last = i + 1 == messages.size();
      if (m.role == "user" || m.role == "system" || (m.role == "assistant" && m.tool_calls.empty())) {
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      } else if (m.role == "assistant") {
        out += "<|im_start|>assistant";
        for (const ChatToolCall& call : m.tool_calls)
          out += "\n<tool_call>\n{\"name\": \"" + call.name + "\", \"arguments\": " +
                 arguments_as_template_json(call.arguments) + "}\n</tool_call>";
        out += "<|im_end|>\n";
      } else if (m.role == "tool") {
        if (i > 0 && messages[i - 1].role != "tool") out += "<|im_start|>tool\n";
        out += "<tool_response>\n" + m.content + (last ? "\n</tool_response>" : "\n</tool_response>\n");
        if (last || messages[i + 1].role != "tool") out += "<|im_end|>";
      }
    }
    if (options.add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ToolFormat> make_hermes_tool_format() { return std::make_unique<HermesToolFormat>(); }

}  // namespace ridge::chat
