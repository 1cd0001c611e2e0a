#pragma once
// A thinking model's reasoning as the engine sees it, by token id: whether the thinking is open,
// how many tokens it has taken, when a budget forces it closed, and when a grammar that constrains
// the answer (not the thinking) takes over. Knows nothing of text or APIs; the server builds the
// ThinkingGate from the model's tags (serve/completion_job).
#include <cstdint>
#include <vector>

namespace ridge {

struct ThinkingGate {
  int32_t open_token = -1;   // "<think>"
  int32_t close_token = -1;  // "</think>"
  bool starts_open = false;  // the prompt opened the thinking (the model writes no open tag)
  int32_t budget = -1;       // thinking tokens before the close is forced; -1: no limit
  std::vector<int32_t> forced_close;  // appended when the budget is spent; ends with close_token
  bool defer_grammar = false;  // the request's grammar constrains what follows the thinking only
};

class ThinkingTracker {
 public:
  explicit ThinkingTracker(const ThinkingGate& gate)
      : gate_(gate), state_(gate.starts_open ? State::kOpen : State::kBefore) {}

  // Before the first token: the model may open the thinking (its open tag is allowed past a grammar).
  bool before() const { return state_ == State::kBefore; }
  bool open() const { return state_ == State::kOpen; }
  bool closed() const { return state_ == State::kClosed; }
  const ThinkingGate& gate() const { return gate_; }

  // One more token of the output; true when this token closed the thinking (or showed there is none).
  bool on_token(int32_t token) {
    switch (state_) {
      case State::kBefore:
        state_ = token == gate_.open_token ? State::kOpen : State::kClosed;
        return state_ == State::kClosed;
      case State::kOpen:
        ++thought_;
        if (token != gate_.close_token) return false;
        state_ = State::kClosed;
        return true;
      case State::kClosed: return false;
    }
    return false;
  }

  // The budget is spent and the close has not been written: force it now.
  bool must_close() const { return state_ == State::kOpen && gate_.budget >= 0 && thought_ >= gate_.budget; }
  int64_t thought() const { return thought_; }

 private:
  enum class State { kBefore, kOpen, kClosed };
  ThinkingGate gate_;
  State state_;
  int64_t thought_ = 0;
};

}  // namespace ridge
