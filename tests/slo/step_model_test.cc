#include "slo/step_model.h"

#include <gtest/gtest.h>

#include <random>

#include "plan/hardware.h"
#include "plan/model_catalog.h"
#include "slo/slo_plan.h"

namespace ridge::slo {
namespace {

plan::HardwareSpec cpu() {
  plan::HardwareSpec hw;
  hw.name = "test cpu";
  hw.kind = "cpu";
  hw.memory_bw = 20e9;
  hw.peak_f32 = 4e11;
  hw.peak_int8 = 1.6e12;
  return hw;
}

plan::Precision cpu_precision() {
  plan::Precision p;
  p.weights = plan::number_format("int8");
  p.embeddings = plan::number_format("int8");
  p.kv = plan::number_format("fp16");
  p.activations = plan::number_format("f32");
  return p;
}

// A ragged step of equal runs costs what the planner's uniform step_cost says.
TEST(RaggedCost, UniformRunsMatchStepCost) {
  for (const char* name : {"llama-3-8b", "mixtral-8x7b", "deepseek-v3"}) {
    const ModelSpec spec = *plan::named_model_spec(name);
    const plan::RaggedCostModel model(spec, cpu_precision(), cpu());
    for (auto [n_seq, n_new, n_past] : {std::tuple{1, 1, 0}, {8, 1, 511}, {1, 128, 0}, {3, 17, 900}}) {
      const plan::StepCost ref = plan::step_cost(spec, cpu_precision(), plan::StepShape{n_seq, n_new, n_past, false});
      std::vector<plan::RunShape> runs(size_t(n_seq), plan::RunShape{n_past, n_new, 1});
      const plan::RaggedStepCost c = model.cost(runs);
      EXPECT_NEAR(c.flops(), ref.flops(), 1e-9 * ref.flops()) << name << " " << n_seq << "x" << n_new;
      EXPECT_NEAR(c.bytes(), ref.bytes(), 1e-9 * ref.bytes()) << name << " " << n_seq << "x" << n_new;
      EXPECT_EQ(c.tokens, int64_t(n_seq) * n_new);
    }
  }
}

TEST(RaggedCost, StagesSplitTheStep) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  const plan::RaggedCostModel model(spec, cpu_precision(), cpu());
  const std::vector<plan::RunShape> runs = {{1000, 1, 1}, {0, 256, 1}, {40, 1, 1}};
  const plan::RaggedStepCost c = model.cost(runs);
  for (const plan::StageCost& s : c.stages) {
    EXPECT_GT(s.flops, 0);
    EXPECT_GT(s.bytes, 0);
  }
  // Only attention does non-GEMM FLOPs; the head's GEMM is over the three sampled rows.
  EXPECT_GT(c[plan::Stage::Attention].flops, c[plan::Stage::Attention].gemm_flops);
  EXPECT_DOUBLE_EQ(c[plan::Stage::Ffn].flops, c[plan::Stage::Ffn].gemm_flops);
  EXPECT_NEAR(c[plan::Stage::Head].gemm_flops, 2.0 * 3 * double(spec.n_vocab) * double(spec.n_embd), 1);
  // A longer history costs attention more and nothing else.
  const std::vector<plan::RunShape> longer = {{4000, 1, 1}, {0, 256, 1}, {40, 1, 1}};
  const plan::RaggedStepCost d = model.cost(longer);
  EXPECT_GT(d[plan::Stage::Attention].bytes, c[plan::Stage::Attention].bytes);
  EXPECT_DOUBLE_EQ(d[plan::Stage::Ffn].bytes, c[plan::Stage::Ffn].bytes);
}

TEST(FitCoefficients, RecoversAKnownLinearModel) {
  const Coefficients truth = {0.02, 1.3, 4.0, 2.5};  // every part a sizeable share of a step
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 0.05);
  std::vector<std::array<double, 4>> x;
  std::vector<double> y;
  for (int i = 0; i < 300; ++i) {
    std::array<double, 4> row{1, u(rng), u(rng), u(rng) * (i % 3 == 0)};
    double t = 0;
    for (size_t j = 0; j < 4; ++j) t += truth[j] * row[j];
    x.push_back(row);
    y.push_back(t);
  }
  const Coefficients c = fit_coefficients(x, y, {0, 1, 1, 1}, 2.0);
  for (size_t j = 0; j < 4; ++j) EXPECT_NEAR(c[j], truth[j], 0.05 * truth[j] + 1e-4) << j;
}

TEST(FitCoefficients, StaysNonNegativeAndNearThePriorWithoutData) {
  const Coefficients prior = {0.001, 1, 1, 1};
  EXPECT_EQ(fit_coefficients({}, {}, prior, 2.0), prior);
  // Data that would want a negative attention coefficient: it is clamped at zero.
  std::vector<std::array<double, 4>> x = {{1, 0.01, 0.001, 0.01}, {1, 0.01, 0.001, 0.02}, {1, 0.01, 0.001, 0.04}};
  std::vector<double> y = {0.02, 0.018, 0.015};
  const Coefficients c = fit_coefficients(x, y, prior, 0.01);
  for (double v : c) EXPECT_GE(v, 0);
}

TEST(StepModel, LearnsAMachineSlowerThanItsRoofline) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  StepModel model(plan::RaggedCostModel(spec, cpu_precision(), cpu()));
  // The "machine": a fixed 3 ms per step, memory at 80% of the roof, GEMMs at 30%.
  auto machine = [&](const std::vector<plan::RunShape>& runs) {
    const plan::RaggedStepCost c = model.cost(runs);
    double mem = 0, gemm = 0, attn = 0;
    for (const auto& s : c.stages) mem += s.memory_s, gemm += s.gemm_compute_s, attn += s.attention_compute_s;
    return 0.003 + mem / 0.8 + gemm / 0.3 + attn / 0.5;
  };
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::vector<plan::RunShape> runs(size_t(1 + rng() % 16), plan::RunShape{int64_t(rng() % 2000), 1, 1});
    if (i % 4 == 0) runs.push_back({int64_t(rng() % 1000), int64_t(16 + rng() % 500), 1});
    model.observe(model.cost(runs), machine(runs));
  }
  const std::vector<plan::RunShape> probe = {{700, 1, 1}, {700, 1, 1}, {0, 300, 1}};
  EXPECT_NEAR(model.predict(probe), machine(probe), 0.03 * machine(probe));
  EXPECT_LT(model.mean_relative_error(), 0.05);
  model.forget();
  EXPECT_EQ(model.observations(), 0);
  EXPECT_EQ(model.coefficients(), model.prior());
}

TEST(SloPlan, TighterObjectivesHoldFewerStreamsAndLongerContextsFewerStill) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  StepModel model(plan::RaggedCostModel(spec, cpu_precision(), cpu()), {0.002, 0});
  SloPlanInputs in;
  in.n_ctx = 8192;
  in.kv_tokens = 1 << 20;
  in.slo = loadgen::parse_slo("ttft=5s,itl=2s");
  const SloPlan loose = plan_for_slo(model, in);
  in.slo = loadgen::parse_slo("ttft=5s,itl=800ms");
  const SloPlan tight = plan_for_slo(model, in);
  EXPECT_GT(loose.design_streams, tight.design_streams);
  EXPECT_GE(tight.design_streams, 1);
  for (size_t i = 1; i < tight.capacity.size(); ++i) EXPECT_LE(tight.capacity[i].by_latency, tight.capacity[i - 1].by_latency);
  // The plan's own numbers hold in its model: design_streams decodes and a chunk fit the bound, one more does not.
  std::vector<plan::RunShape> runs(size_t(tight.design_streams), plan::RunShape{tight.design_context, 1, 1});
  runs.push_back({0, tight.prefill_chunk, 1});
  EXPECT_LE(model.predict(runs), tight.step_bound_s);
  runs.insert(runs.begin(), plan::RunShape{tight.design_context, 1, 1});
  if (tight.design_streams < 1024) EXPECT_GT(model.predict(runs), tight.step_bound_s);
  // TTFT: a prompt at the idle limit fits, one much longer does not.
  EXPECT_LE(prefill_seconds(model, tight.max_prompt_idle, tight.max_batched_tokens, 0, 0), 5.0);
  EXPECT_GE(tight.max_prompt_idle, tight.max_prompt_loaded);
  EXPECT_NE(describe(tight).find("concurrent streams"), std::string::npos);
  // A memory-bound pool caps the streams.
  in.kv_tokens = 3 * tight.design_context;
  EXPECT_LE(plan_for_slo(model, in).design_streams, 3);
}

// A noisy machine: most steps as the model says, a few (the CPU lent to another process) many times
// longer. Dropping those brings the fit back to the steady steps.
TEST(StepModel, RejectsOutliersOfABusyMachine) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  StepModel model(plan::RaggedCostModel(spec, cpu_precision(), cpu()));
  auto machine = [&](const std::vector<plan::RunShape>& runs) {
    const plan::RaggedStepCost c = model.cost(runs);
    double mem = 0, gemm = 0;
    for (const auto& s : c.stages) mem += s.memory_s, gemm += s.gemm_compute_s;
    return 0.002 + mem / 0.7 + gemm / 0.4;
  };
  std::mt19937 rng(9);
  for (int i = 0; i < 120; ++i) {
    std::vector<plan::RunShape> runs(size_t(1 + rng() % 12), plan::RunShape{int64_t(rng() % 1500), 1, 1});
    if (i % 3 == 0) runs.push_back({0, int64_t(16 + rng() % 400), 1});
    const double stolen = i % 7 == 3 ? 6.0 : 1.0;  // one step in seven takes six times as long
    model.observe(model.cost(runs), stolen * machine(runs));
  }
  const std::vector<plan::RunShape> probe = {{500, 1, 1}, {500, 1, 1}, {0, 200, 1}};
  const double before = std::abs(model.predict(probe) - machine(probe)) / machine(probe);
  const size_t dropped = model.reject_outliers();
  EXPECT_GE(dropped, 15u);  // the 17 slow steps, give or take a steady one at the edge
  EXPECT_LE(dropped, 20u);
  const double after = std::abs(model.predict(probe) - machine(probe)) / machine(probe);
  EXPECT_LT(after, 0.05);
  EXPECT_LT(after, before);
  EXPECT_LT(model.fit_error(), 0.05);
  EXPECT_GT(model.error_with(model.prior()), model.fit_error());
  model.use_prior();
  EXPECT_EQ(model.coefficients(), model.prior());
}

// A decode measured within the bound keeps one stream in the plan, whatever the model predicts.
TEST(SloPlan, OneMeasuredStreamIsNeverPlannedAway) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  StepModel model(plan::RaggedCostModel(spec, cpu_precision(), cpu()), {0.5, 0});  // 500 ms a step: pessimistic
  SloPlanInputs in;
  in.n_ctx = 4096;
  in.kv_tokens = 1 << 20;
  in.slo = loadgen::parse_slo("ttft=5s,itl=100ms");
  EXPECT_EQ(plan_for_slo(model, in).design_streams, 0);
  in.measured_one_stream_s = 0.120;  // measured, but past the bound (85 ms): still none
  EXPECT_EQ(plan_for_slo(model, in).design_streams, 0);
  in.measured_one_stream_s = 0.060;
  const SloPlan p = plan_for_slo(model, in);
  EXPECT_EQ(p.design_streams, 1);
  EXPECT_GE(p.max_num_seqs, 1);
  ASSERT_FALSE(p.capacity.empty());
  EXPECT_EQ(p.capacity.front().streams(), 1);
  EXPECT_NE(describe(p).find("measured 60 ms"), std::string::npos) << describe(p);
}

// A busy machine's steps of one shape take one time or three times it (the CPU lent away or not):
// the model predicts their mean, not the fast mode a fit on error relative to the measurement picks.
TEST(StepModel, BimodalStepsArePredictedAtTheirMean) {
  const ModelSpec spec = *plan::named_model_spec("llama-3-8b");
  StepModel model(plan::RaggedCostModel(spec, cpu_precision(), cpu()));
  const std::vector<plan::RunShape> one = {{500, 1, 1}};
  const std::vector<plan::RunShape> eight(8, plan::RunShape{500, 1, 1});
  const double t1 = 0.02, t8 = 0.05;
  std::mt19937 rng(3);
  double sum1 = 0, sum8 = 0;
  int n1 = 0, n8 = 0;
  for (int i = 0; i < 300; ++i) {
    const double slow = rng() % 10 < 7 ? 3.0 : 1.0;
    if (i % 2) {
      model.observe(model.cost(one), slow * t1), sum1 += slow * t1, ++n1;
    } else {
      model.observe(model.cost(eight), slow * t8), sum8 += slow * t8, ++n8;
    }
  }
  EXPECT_NEAR(model.predict(one), sum1 / n1, 0.12 * sum1 / n1);
  EXPECT_NEAR(model.predict(eight), sum8 / n8, 0.12 * sum8 / n8);
}

}  // namespace
}  // namespace ridge::slo
