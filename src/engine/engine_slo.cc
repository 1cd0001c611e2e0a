// The engine's side of the latency objectives (slo/): after each step, the step model learns the
// step's time, the preemption guard sees its preemptions, the roofline statistics take the step's
// FLOPs and bytes, and requests that can no longer meet the TTFT objective are counted.
#include <algorithm>
#include <cstdio>

#include "core/log.h"
#include "engine/engine_live.h"
#include "slo/slo_governor.h"

namespace ridge {
namespace {

constexpr size_t kRecentSteps = 240;  // points on the page's roofline chart

void add_fraction(SloStats::FractionHistogram& h, double v) { h.add(kRooflineFractionBuckets, v); }

}  // namespace

void Engine::account_step(const StepPlan& plan, double seconds) {
  slo::SloGovernor& governor = *config_.governor;
  slo::StepModel& model = governor.model();
  std::vector<plan::RunShape> runs;
  runs.reserve(plan.requests.size());
  int64_t decode_tokens = 0;
  for (const ScheduledRequest& s : plan.requests) {
    runs.push_back({s.first_position, s.n_tokens, s.samples ? 1 + s.n_draft : 0});
    if (s.n_tokens == 1 && s.samples) ++decode_tokens;
  }
  const plan::RaggedStepCost cost = model.cost(runs);
  const double predicted = model.observe(cost, seconds);

  SloStats& st = own_.slo;
  const plan::HardwareSpec& hw = model.hardware();
  st.enabled = true;
  st.memory_bw = hw.memory_bw;
  st.gemm_peak = cost.compute_s() > 0 ? cost.flops() / cost.compute_s() : hw.peak(plan::ComputeClass::INT8);
  st.measured_machine = hw.source != "placeholder";
  if (seconds > 0) {
    const std::array<double, 3> stage_s = model.stage_seconds(cost, seconds);
    for (size_t i = 0; i < 3; ++i) {
      const plan::StageCost& c = cost.stages[i];
      if (stage_s[i] <= 0 || c.bytes <= 0) continue;
      add_fraction(st.stage_bandwidth[i], c.memory_s / stage_s[i]);
      add_fraction(st.stage_compute[i], (c.gemm_compute_s + c.attention_compute_s) / stage_s[i]);
      st.stage_bytes[i] += c.bytes;
      st.stage_flops[i] += c.flops;
      st.stage_seconds[i] += stage_s[i];
    }
    add_fraction(st.step_bandwidth, cost.memory_s() / seconds);
    add_fraction(st.step_compute, cost.compute_s() / seconds);
    if (decode_tokens == cost.tokens) {
      add_fraction(st.decode_step_bandwidth, cost.memory_s() / seconds);
      ++st.decode_steps;
      st.decode_step_bytes += cost.bytes();
      st.decode_step_seconds += seconds;
    }
    st.recent.push_back({seconds, cost.flops(), cost.bytes(), cost.tokens, decode_tokens, predicted});
    if (st.recent.size() > kRecentSteps) st.recent.erase(st.recent.begin());
  }
  st.coefficients = model.coefficients();
  st.model_error = model.mean_relative_error();

  const SchedulerCounters c = scheduler_->counters();
  if (governor.on_step(int64_t(plan.preempted.size()), c.running)) {
    const slo::GovernorStats g = governor.stats();
    if (g.running_cap > 0)
      log_warning("ridge: preemption cascade ({} preemptions in the last steps): at most {} requests run at once now",
                  config_.governor->config().cascade_preemptions, g.running_cap);
    else
      log_info("ridge: no preemptions for a while: the cap on running requests is lifted");
  }
  const slo::GovernorStats g = governor.stats();
  st.step_bound_s = g.step_bound_s;
  st.decode_bound_s = g.decode_bound_s;
  st.running_cap = g.running_cap;
  st.cascades = g.cascades;
  st.held_tokens = c.slo_held_tokens;
  st.held_admissions = c.slo_held_admissions;
  st.ttft_s = config_.slo_ttft_s;

  // The TTFT objective: what waits ahead of a new prompt, and how fast prompts go through now.
  std::vector<plan::RunShape> decodes;
  int64_t backlog = 0;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [id, live] : live_) {
    if (std::find(finished_.begin(), finished_.end(), id) != finished_.end()) continue;  // retired this step
    if (live->completion > 0) {
      decodes.push_back({int64_t(scheduler_->tokens(id).size()), 1, 1});
      continue;
    }
    backlog += std::max<int64_t>(0, scheduler_->n_prompt(id) - scheduler_->n_computed(id));
    if (config_.slo_ttft_s > 0 && !live->ttft_missed &&
        std::chrono::duration<double>(now - live->submitted).count() > config_.slo_ttft_s) {
      live->ttft_missed = true;
      ++st.ttft_unmeetable;
    }
  }
  const int64_t chunk = !decodes.empty() && config_.prefill_chunk > 0 ? config_.prefill_chunk : config_.max_batched_tokens;
  decodes.push_back({0, chunk, 1});
  const double chunk_s = model.predict(decodes);
  std::lock_guard lock(mutex_);
  backlog_prompt_tokens_ = backlog;
  prompt_tokens_per_s_ = chunk_s > 0 ? double(chunk) / chunk_s : 0;
}

double Engine::predicted_ttft_s(int64_t n_prompt) const {  // under mutex_
  if (prompt_tokens_per_s_ <= 0) return 0;
  return double(backlog_prompt_tokens_ + inbox_prompt_tokens_ + n_prompt) / prompt_tokens_per_s_;
}

}  // namespace ridge
