#include "chat/reasoning.h"

#include <algorithm>

namespace ridge::chat {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t skip_spaces(std::string_view s, size_t at = 0) {
  while (at < s.size() && is_space(s[at])) ++at;
  return at;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace

std::optional<ReasoningTags> detect_reasoning_tags(std::string_view jinja_template) {
  // Every family that thinks in <think> tags names the closing tag in its template (R1 strips old
  // turns' thinking at it, Qwen 3 splits reasoning_content at it, QwQ opens the block).
  if (jinja_template.find("</think>") != std::string_view::npos ||
      jinja_template.find("<think>") != std::string_view::npos)
    return ReasoningTags{};
  return std::nullopt;
}

PromptThinking prompt_thinking(std::string_view prompt, const ReasoningTags& tags) {
  const std::string_view tail = trim_right(prompt);
  auto ends_with = [&](const std::string& tag) {
    return tail.size() >= tag.size() && tail.substr(tail.size() - tag.size()) == tag;
  };
  if (ends_with(tags.open)) return PromptThinking::kOpen;
  if (ends_with(tags.close)) return PromptThinking::kClosed;
  return PromptThinking::kNone;
}

std::optional<ReasoningFormat> reasoning_format_from_name(std::string_view name) {
  if (name == "none") return ReasoningFormat::kNone;
  if (name == "separate" || name == "deepseek" || name == "auto") return ReasoningFormat::kSeparate;
  return std::nullopt;
}

ReasoningSplitter::ReasoningSplitter(ReasoningTags tags, bool starts_open)
    : tags_(std::move(tags)), state_(starts_open ? State::kReasoning : State::kStart), trim_leading_(starts_open) {}

ReasoningSplitter::Delta ReasoningSplitter::push(std::string_view text, bool final) {
  pending_.append(text);
  Delta out;
  run(out, final);
  reasoning_ += out.reasoning;
  content_ += out.content;
  return out;
}

void ReasoningSplitter::run(Delta& out, bool final) {
  for (;;) {
    if (trim_leading_) {
      const size_t n = skip_spaces(pending_);
      pending_.erase(0, n);
      if (pending_.empty() && !final) return;
      trim_leading_ = false;
    }
    switch (state_) {
      case State::kStart: {
        // Thinking opens only at the very start of the output (after whitespace).
        const size_t at = skip_spaces(pending_);
        const std::string_view rest = std::string_view(pending_).substr(at);
        if (rest.size() >= tags_.open.size() && rest.substr(0, tags_.open.size()) == tags_.open) {
          pending_.erase(0, at + tags_.open.size());
          state_ = State::kReasoning;
          trim_leading_ = true;
          continue;
        }
        if (!final && std::string_view(tags_.open).substr(0, rest.size()) == rest) return;  // could still be the tag
        state_ = State::kContent;
        continue;
      }
      case State::kReasoning: {
        const size_t close = pending_.find(tags_.close);
        if (close != std::string::npos) {
          out.reasoning += trim_right(std::string_view(pending_).substr(0, close));
          pending_.erase(0, close + tags_.close.size());
          state_ = State::kContent;
          closed_ = true;
          trim_leading_ = true;
          continue;
        }
        if (final) {  // cut off while thinking: all of it is reasoning
          out.reasoning += trim_right(pending_);
          pending_.clear();
          return;
        }
        // Hold back what may begin the close tag, and whitespace that may end the reasoning.
        const std::string_view text = pending_;
        const size_t held_tag = partial_tag_suffix(text, tags_.close);
        const std::string_view body = trim_right(text.substr(0, text.size() - held_tag));
        out.reasoning += body;
        pending_.erase(0, body.size());
        return;
      }
      case State::kContent:
        out.content += pending_;
        pending_.clear();
        return;
    }
  }
}

}  // namespace ridge::chat
