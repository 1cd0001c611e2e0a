#pragma once
// The engine's guard of its latency objectives, as the scheduler's StepGovernor: steps that decode
// stay within the inter-token bound (prefill chunks shrink to fit, admissions wait), and a
// preemption cascade (preempt, recompute, preempt again) lowers the number of running requests
// until the KV pool holds them. Both read the online-fitted StepModel. Runs on the engine's thread;
// stats() is a copy for any thread.
#include <cstdint>
#include <deque>
#include <memory>

#include "engine/step_governor.h"
#include "slo/step_model.h"

namespace ridge::slo {

struct GovernorConfig {
  double step_bound_s = 0;    // no step that decodes above this (0: none)
  double decode_bound_s = 0;  // admissions while the running requests' decodes fit within this (0: none)
  int32_t max_num_seqs = 64;
  bool preemption_guard = true;
  // A cascade: at least this many preemptions within the last `window_steps` steps.
  int32_t cascade_preemptions = 4;
  int32_t window_steps = 64;
  int32_t recovery_steps = 256;  // steps without a preemption before the cap rises by one
};

struct GovernorStats {
  int32_t running_cap = 0;      // 0: no cap beyond max_num_seqs
  int64_t cascades = 0;         // times the guard lowered the cap
  int64_t preemptions_in_window = 0;
  double step_bound_s = 0, decode_bound_s = 0;
};

class SloGovernor final : public StepGovernor {
 public:
  SloGovernor(std::shared_ptr<StepModel> model, const GovernorConfig& config);

  double predict_seconds(std::span<const RunLoad> runs) const override { return model_->predict(runs); }
  double step_bound_seconds() const override { return config_.step_bound_s; }
  double decode_bound_seconds() const override { return config_.decode_bound_s; }
  int32_t max_running() const override { return cap_; }

  // After each step: the preemptions it made and the requests running after it. True when the guard
  // changed the cap (the engine logs it).
  bool on_step(int64_t preemptions, int64_t running);
  GovernorStats stats() const;
  StepModel& model() { return *model_; }
  const GovernorConfig& config() const { return config_; }

 private:
  std::shared_ptr<StepModel> model_;
  GovernorConfig config_;
  int32_t cap_ = 0;
  std::deque<int64_t> window_;  // preemptions per step, the last window_steps steps
  int64_t in_window_ = 0;
  int64_t calm_steps_ = 0;
  int64_t cascades_ = 0;
};

}  // namespace ridge::slo
