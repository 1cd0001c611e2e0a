#pragma once
// The tool formats, one per file (tool_format_*.cc), for the registry in tool_format.cc.
#include <memory>

#include "chat/tool_format.h"

namespace ridge::chat {

// Formats whose calls are <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call> (Qwen2.5, Hermes):
// they differ only in how they render the prompt.
class ToolCallTagFormat : public ToolFormat {
 public:
  grammar::GrammarSpec calls_grammar(std::span<const Tool> tools, bool parallel) const override;
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::string_view bare_call_key() const override { return "arguments"; }
};

std::unique_ptr<ToolFormat> make_qwen_tool_format();
std::unique_ptr<ToolFormat> make_hermes_tool_format();
// date_from_clock: Llama 3.2+ prints today's date (strftime_now); 3.1 prints "26 Jul 2024".
std::unique_ptr<ToolFormat> make_llama3_tool_format(bool date_from_clock);
std::unique_ptr<ToolFormat> make_mistral_tool_format();

}  // namespace ridge::chat
