// The scheduler under a StepGovernor: prefill chunks shrink so that a step that decodes stays in
// the bound, admissions wait while the running requests' decodes fill the decode bound, and the
// running cap holds.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/scheduler.h"

namespace ridge {
namespace {

// A step costs 1 ms plus 0.1 ms per token plus 0.001 ms per cached position a run reads.
class LinearGovernor final : public StepGovernor {
 public:
  double step_bound = 0, decode_bound = 0;
  int32_t cap = 0;
  double predict_seconds(std::span<const RunLoad> runs) const override {
    double t = 1e-3;
    for (const RunLoad& r : runs) t += 1e-4 * double(r.n_new) + 1e-6 * double(r.n_past);
    return t;
  }
  double step_bound_seconds() const override { return step_bound; }
  double decode_bound_seconds() const override { return decode_bound; }
  int32_t max_running() const override { return cap; }
};

std::vector<int32_t> tokens(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1);
  return v;
}

std::vector<SampledToken> sample_all(const StepPlan& plan) {
  std::vector<SampledToken> out;
  for (const ScheduledRequest& r : plan.requests)
    if (r.samples) out.push_back({r.id, 7, false});
  return out;
}

TEST(SchedulerGovernor, PrefillChunksShrinkToKeepDecodingStepsInBound) {
  LinearGovernor g;
  g.step_bound = 0.010;  // 10 ms: with one decode (1.1 ms + history) about 88 prompt tokens fit
  SchedulerConfig c;
  c.max_batched_tokens = 512;
  c.governor = &g;
  KvManager kv(KvConfig{4096, 16, false});
  Scheduler s(c, kv);
  s.add({1, tokens(8), 100});
  s.on_step_done(sample_all(s.schedule()));  // request 1 now decodes
  s.add({2, tokens(1000), 4});
  int64_t prompt_done = 0;
  for (int step = 0; step < 100 && prompt_done < 1000; ++step) {
    const StepPlan plan = s.schedule();
    std::vector<RunLoad> loads;
    bool decodes = false;
    for (const ScheduledRequest& r : plan.requests) {
      loads.push_back({r.first_position, r.n_tokens, r.samples ? 1 : 0});
      if (r.id == 1) decodes = true;
      if (r.id == 2) prompt_done += r.n_tokens;
    }
    EXPECT_TRUE(decodes);
    EXPECT_LE(g.predict_seconds(loads), g.step_bound + 1e-12) << "step " << step;
    s.on_step_done(sample_all(plan));
  }
  EXPECT_GE(prompt_done, 1000);  // the prompt still goes through, in smaller chunks
  EXPECT_GT(s.counters().slo_held_tokens, 0);
}

TEST(SchedulerGovernor, WithoutDecodesAPromptTakesTheWholeBudget) {
  LinearGovernor g;
  g.step_bound = 0.002;
  SchedulerConfig c;
  c.max_batched_tokens = 512;
  c.governor = &g;
  KvManager kv(KvConfig{4096, 16, false});
  Scheduler s(c, kv);
  s.add({1, tokens(600), 4});
  EXPECT_EQ(s.schedule().n_tokens, 512);  // nobody waits on this step's latency
}

TEST(SchedulerGovernor, AdmissionsWaitForTheDecodeBoundAndTheCap) {
  LinearGovernor g;
  g.step_bound = 1.0;
  g.decode_bound = 1e-3 + 3 * (1e-4 + 1e-6 * 10) + 1e-9;  // room for three short decodes
  SchedulerConfig c;
  c.max_batched_tokens = 512;
  c.governor = &g;
  KvManager kv(KvConfig{4096, 16, false});
  Scheduler s(c, kv);
  for (RequestId id = 1; id <= 6; ++id) s.add({id, tokens(9), 50});
  for (int i = 0; i < 3; ++i) s.on_step_done(sample_all(s.schedule()));
  EXPECT_EQ(s.counters().running, 3);
  EXPECT_GT(s.counters().slo_held_admissions, 0);
  // Lift the bound, cap the running count instead.
  g.decode_bound = 0;
  g.cap = 4;
  for (int i = 0; i < 3; ++i) s.on_step_done(sample_all(s.schedule()));
  EXPECT_EQ(s.counters().running, 4);
}

}  // namespace
}  // namespace ridge
