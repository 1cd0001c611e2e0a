#include "chat/tool_format.h"

#include <fmt/format.h>

#include "chat/tool_call_text.h"
#include "chat/tool_formats.h"
#include "core/error.h"

namespace ridge::chat {

std::string ToolFormat::new_call_id() const { return "call_" + random_alnum(24); }

grammar::GrammarSpec ToolCallTagFormat::calls_grammar(std::span<const Tool> tools, bool parallel) const {
  std::vector<grammar::GrammarTag> tags;
  for (const Tool& tool : tools) tags.push_back(call_tag(tool, "<tool_call>\n", "arguments", "\n</tool_call>"));
  return calls_spec(std::move(tags), parallel, "\n");
}

ParsedOutput ToolCallTagFormat::parse(std::string_view text, bool final) const {
  return parse_marked_calls(text, final, "<tool_call>", "</tool_call>", "arguments");
}

std::unique_ptr<ToolFormat> detect_tool_format(std::string_view t) {
  const auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("You are a function calling AI model") && has("<tool_call>")) return make_hermes_tool_format();
  if (has("You are provided with function signatures within <tools></tools> XML tags") && has("<tool_call>"))
    return make_qwen_tool_format();
  if (has("Environment: ipython")) return make_llama3_tool_format(has("strftime_now"));
  if (has("[AVAILABLE_TOOLS]") && has("[TOOL_CALLS]")) return make_mistral_tool_format();
  return nullptr;
}

std::unique_ptr<ToolFormat> make_tool_format(std::string_view name) {
  if (name == "qwen2.5" || name == "qwen") return make_qwen_tool_format();
  if (name == "hermes") return make_hermes_tool_format();
  if (name == "llama3" || name == "llama3_json") return make_llama3_tool_format(/*date_from_clock=*/true);
  if (name == "llama3.1") return make_llama3_tool_format(/*date_from_clock=*/false);
  if (name == "mistral") return make_mistral_tool_format();
  return nullptr;
}

std::vector<std::string_view> tool_format_names() { return {"qwen2.5", "hermes", "llama3", "llama3.1", "mistral"}; }

std::shared_ptr<const ToolFormat> select_tool_format(std::string_view jinja_template, ChatFormat chat_format,
                                                     std::string_view override_name) {
  if (!override_name.empty()) {
    auto format = make_tool_format(override_name);
    if (!format) fail("unknown --tool-call-parser '{}'; one of: {}", override_name, fmt::join(tool_format_names(), ", "));
    return format;
  }
  if (auto format = detect_tool_format(jinja_template)) return format;
  if (chat_format == ChatFormat::ChatML) return make_qwen_tool_format();  // ChatML without a tool template
  return nullptr;
}

}  // namespace ridge::chat
