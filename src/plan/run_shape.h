#pragma once
// One request's run in an engine step, in counts: what the step cost of a ragged batch needs.
#include <cstdint>

namespace ridge::plan {

struct RunShape {
  int64_t n_past = 0;    // positions already in the KV cache
  int64_t n_new = 1;     // positions this step computes
  int64_t n_logits = 0;  // of them, rows that go through the output head (sampled or verified)
};

}  // namespace ridge::plan
