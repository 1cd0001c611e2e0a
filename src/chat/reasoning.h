#pragma once
// A thinking model's output read as reasoning and answer: the text between the model's thinking
// tags (Qwen 3, QwQ and the DeepSeek-R1 family write <think> ... </think>) is reasoning, what
// follows is the answer (content, tool calls). Streamed text is split as it arrives; the
// concatenated deltas are exactly the final reasoning and content. Whitespace right after a tag
// and right before the closing tag is not part of either (llama.cpp and vLLM trim it too).
#include <optional>
#include <string>
#include <string_view>

namespace ridge::chat {

struct ReasoningTags {
  std::string open = "<think>";
  std::string close = "</think>";
};

// The thinking tags a chat template writes, or nullopt when it writes none.
std::optional<ReasoningTags> detect_reasoning_tags(std::string_view jinja_template);

// Where a rendered prompt leaves the thinking: opened by the template (its generation prompt ends
// with the open tag: the newer R1 and QwQ templates), closed (thinking switched off, Qwen 3's
// enable_thinking=false writes an empty block), or neither (the model opens it itself, or not).
enum class PromptThinking { kNone, kOpen, kClosed };
PromptThinking prompt_thinking(std::string_view prompt, const ReasoningTags& tags);

// llama.cpp's --reasoning-format names: "none" (thinking stays in content), "separate" ("deepseek",
// "auto" are the same here: reasoning_content beside content).
enum class ReasoningFormat { kNone, kSeparate };
std::optional<ReasoningFormat> reasoning_format_from_name(std::string_view name);

class ReasoningSplitter {
 public:
  ReasoningSplitter(ReasoningTags tags, bool starts_open);

  struct Delta {
    std::string reasoning;
    std::string content;
  };
  // `text` continues the output; `final`: nothing more will come (held-back text is released).
  Delta push(std::string_view text, bool final);

  bool thinking() const { return state_ == State::kReasoning; }  // inside the tags now
  bool closed() const { return closed_; }                          // the close tag was read
  const std::string& reasoning() const { return reasoning_; }
  const std::string& content() const { return content_; }

 private:
  enum class State { kStart, kReasoning, kContent };
  void run(Delta& out, bool final);

  ReasoningTags tags_;
  State state_;
  bool trim_leading_;     // drop whitespace at the start of the current part
  bool closed_ = false;
  std::string pending_;   // read, not yet given out: a possible tag prefix or trailing whitespace
  std::string reasoning_, content_;
};

}  // namespace ridge::chat
