// Qwen2.5 (Instruct and Coder): the tools as JSON lines inside <tools></tools> in the system turn,
// calls as <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>, results as <tool_response>
// blocks in a user turn. Mirrors the template's text and branches exactly.
#include "chat/tool_call_text.h"
#include "chat/tool_formats.h"
#include "chat/python_json.h"

namespace ridge::chat {
namespace {

constexpr std::string_view kToolsIntro =
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsOutro =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}\n</tool_call><|im_end|>\n";

class QwenToolFormat final : public ToolCallTagFormat {
 public:
  std::string_view name() const override { return "qwen2.5"; }

  std::string render(std::span<const ChatMessage> messages, std::span<const Tool> tools,
                     const ToolPromptOptions& options) const override {
    std::string out;
    const bool leading_system = !messages.empty() && messages[0].role == "system";
    const std::string& system = leading_system ? messages[0].content : options.default_system_prompt;
    if (!tools.empty()) {
      out += "<|im_start|>system\n" + system;
      // Without any system text (Qwen3, ChatML models without a default) the block opens on "# Tools".
      out += leading_system || !system.empty() ? kToolsIntro : kToolsIntro.substr(2);
      for (const Tool& tool : tools) out += "\n" + python_json(tool.definition);
      out += kToolsOutro;
    } else if (leading_system || !system.empty()) {
      out += "<|im_start|>system\n" + system + "<|im_end|>\n";
    }
    for (size_t i = 0; i < messages.size(); ++i) {
      const ChatMessage& m = messages[i];
      if (m.role == "user" || (m.role == "system" && i > 0) || (m.role == "assistant" && m.tool_calls.empty())) {
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      } else if (m.role == "assistant") {
        out += "<|im_start|>assistant";
        if (!m.content.empty()) out += "\n" + m.content;
        for (const ChatToolCall& call : m.tool_calls)
          out += "\n<tool_call>\n{\"name\": \"" + call.name + "\", \"arguments\": " +
                 arguments_as_template_json(call.arguments) + "}\n</tool_call>";
        out += "<|im_end|>\n";
      } else if (m.role == "tool") {
        if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
        out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
        if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
      }
    }
    if (options.add_generation_prompt) out += "<|im_start|>assistant\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<ToolFormat> make_qwen_tool_format() { return std::make_unique<QwenToolFormat>(); }

}  // namespace ridge::chat
