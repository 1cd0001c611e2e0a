#pragma once
// What the scheduler asks before it grows a step, so that a latency objective holds (slo/ answers):
// the predicted time of a step from its runs' counts alone, the bound a step must stay under while
// some request decodes, and how many requests may run at once right now. Counts only: the scheduler
// still knows nothing of tensors, and nothing here knows of requests.
#include <cstdint>
#include <span>

#include "plan/run_shape.h"

namespace ridge {

using RunLoad = plan::RunShape;  // n_past, n_new, n_logits

class StepGovernor {
 public:
  virtual ~StepGovernor() = default;
  virtual double predict_seconds(std::span<const RunLoad> runs) const = 0;
  // No step that runs a decode is planned above this (0: no bound). Prefill chunks shrink to fit.
  virtual double step_bound_seconds() const = 0;
  // A new request is admitted only while every running request's next decode together, with its
  // own, is predicted within this (0: no bound); the rest of step_bound is the prefill chunks' room.
  virtual double decode_bound_seconds() const = 0;
  // Running requests at most, now (a preemption cascade lowers it); <= 0: no cap beyond the config's.
  virtual int32_t max_running() const = 0;
};

}  // namespace ridge
