#pragma once
// The cores of one machine shared by several engines (one per loaded model): each engine gets a
// StepGate from join(), and their steps run one at a time in arrival order (a ticket lock), so no
// two thread pools oversubscribe the cores and no engine waits more than one turn of each other.
//
// While an engine decodes, the others' prompt chunks are capped so that a turn of theirs takes
// at most `itl_share` of that engine's own decode step: its inter-token latency stays within
// (1 + itl_share) of what it sees alone. Each member's cost per prompt token and each decoder's
// step time are learned from the steps themselves (moving averages of what leave() reports).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "engine/step_gate.h"

namespace ridge::models {

class SharedCores {
 public:
  struct Options {
    double itl_share = 0.25;     // another engine's turn, as a fraction of a decoder's step
    int64_t min_prefill_tokens = 16;  // the cap never goes below this: prompts always progress
    // A member counts as decoding for this long after its last decode step (or four of its steps).
    std::chrono::milliseconds decoding_window{250};
  };
  SharedCores() : SharedCores(Options{}) {}
  explicit SharedCores(Options options);
  ~SharedCores();

  // A gate for one engine (destroy it, or the engine, to leave). `name` is for diagnostics.
  std::shared_ptr<StepGate> join(std::string name);

  // Turns taken so far, and turns that had to wait for another engine.
  int64_t turns() const;
  int64_t contended_turns() const;
  int64_t yields() const;  // turns given up between layers to an engine that decodes

 private:
  class Member;
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace ridge::models
