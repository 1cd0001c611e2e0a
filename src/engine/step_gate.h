#pragma once
// Engines that share one machine's cores (several models in one server) take turns at it: each
// step runs between enter() and leave(), one engine at a time, in arrival order, so two engines'
// thread pools never fight over the same cores. The gate also tells an engine how many prompt
// tokens its next step may take while another engine's requests are decoding, so a long prompt on
// one model holds the others' inter-token latency near what they see alone. Counts and seconds
// only: nothing here knows of requests or tensors.
#include <cstdint>

namespace ridge {

struct StepReport {
  int64_t n_tokens = 0;         // positions computed in the step
  int64_t n_decode_tokens = 0;  // of them, decodes (a request's next token, drafts included)
  double seconds = 0;           // the step's wall time inside the gate
};

class StepGate {
 public:
  virtual ~StepGate() = default;
  // Blocks until it is this engine's turn.
  virtual void enter() = 0;
  virtual void leave(const StepReport& report) = 0;
  // Prompt tokens this engine's next step may add (0: no cap beyond its own).
  virtual int64_t prefill_cap() const = 0;
  // Between two layers of a step that has no decodes: when another engine with decodes waits,
  // gives it the cores for its step and takes them back after (so its inter-token latency grows by
  // one layer of this step, not the whole step).
  virtual void yield_to_decoders() {}
};

}  // namespace ridge
