#pragma once
// How one family of chat templates offers tools to a model and how the model answers with calls:
// the prompt text (byte for byte what the model's own Jinja template renders), the grammar of the
// calls (for tool_choice "required" or a named function), and reading calls back out of the
// output, also while it streams. One file per family:
//   qwen2.5  Qwen2.5's <tools> system block and <tool_call> answers (also ChatML models without a
//            tool template, with their own default system prompt)
//   hermes   NousResearch Hermes 2 Pro / 3: <tools> with Python signatures, <tool_call> answers
//   llama3   Llama 3.1-3.3: tools in the first user turn, {"name", "parameters"} answers
//   mistral  Mistral Nemo: [AVAILABLE_TOOLS] before the last user turn, [TOOL_CALLS][...] answers
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tools.h"
#include "core/error.h"
#include "grammar/grammar_spec.h"
#include "tokenizer/chat_template.h"

namespace ridge::chat {

struct ToolPromptOptions {
  bool add_generation_prompt = true;
  std::string default_system_prompt;  // the template's own, for conversations without one
  std::string today;                  // "01 Dec 2026", for templates that print the date (Llama 3.2+)
};

class ToolFormat {
 public:
  virtual ~ToolFormat() = default;
  virtual std::string_view name() const = 0;
  // The prompt for a conversation offered `tools` (empty when the request has none but its history
  // holds calls or results). The BOS token is not part of it (the tokenizer adds it). Throws
  // ridge::Error for a conversation the template refuses (its raise_exception cases).
  virtual std::string render(std::span<const ChatMessage> messages, std::span<const Tool> tools,
                             const ToolPromptOptions& options) const = 0;
  // The text of calls to `tools`, exactly: one call, or with `parallel` one or more; each call's
  // arguments are JSON of its tool's parameters schema, spelled with ", " and ": " as the template
  // prints arguments.
  virtual grammar::GrammarSpec calls_grammar(std::span<const Tool> tools, bool parallel) const = 0;
  // Content and calls in `text`. Not `final`: the text may grow, so a possible start of a call is
  // held back from the content and the last call may be incomplete.
  virtual ParsedOutput parse(std::string_view text, bool final) const = 0;
  // Formats whose calls are tagged objects: the arguments key of the bare object small models write
  // when they drop the tags ({"name": ..., "arguments": ...} alone); empty when not read so.
  virtual std::string_view bare_call_key() const { return {}; }
  // An id for a call the model made ("call_" and 24 letters and digits; Mistral wants 9).
  virtual std::string new_call_id() const;
};

// The format a Jinja chat template renders tools in, recognised by its text (as llama.cpp does);
// nullptr when it renders none.
std::unique_ptr<ToolFormat> detect_tool_format(std::string_view jinja_template);
// By name (qwen2.5, hermes, llama3, mistral; vLLM's parser names hermes, llama3_json, mistral too);
// nullptr when unknown.
std::unique_ptr<ToolFormat> make_tool_format(std::string_view name);
std::vector<std::string_view> tool_format_names();
// What a server uses: the override when given (error naming the choices when unknown), else the
// template's format, else qwen2.5's for a ChatML model, else nullptr (tools are then refused).
std::shared_ptr<const ToolFormat> select_tool_format(std::string_view jinja_template, ChatFormat chat_format,
                                                     std::string_view override_name);

}  // namespace ridge::chat
