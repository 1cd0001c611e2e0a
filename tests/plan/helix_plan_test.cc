// Helix (KV parallelism over the TP group) in the planner: attention weights whole on every rank,
// each sequence's KV split by position, one all-gather of partial softmax results per layer; against
// TP, which on MLA replicates attention and its latent KV.
#include <gtest/gtest.h>

#include "core/error.h"
#include "plan/hardware.h"
#include "plan/lint.h"
#include "plan/model_catalog.h"
#include "plan/plan_report.h"
#include "plan/scaling.h"

namespace ridge::plan {
namespace {

constexpr ParallelPlan kOne{1, 1, 1, 1};
constexpr ParallelPlan kTp2{2, 1, 1, 1};
constexpr ParallelPlan kHelix2{2, 1, 1, 2};

PlanInputs inputs(const char* model) {
  PlanInputs in;
  in.spec = *named_model_spec(model);
  in.hw = find_hardware("H100");
  return in;
}

double attention_params(const ModelSpec& spec) {
  double p = 0;
  for (const auto& lin : model_linears(spec))
    if (lin.name.rfind("attn_", 0) == 0) p += lin.params();
  return p;
}

TEST(HelixPlan, KvPerDeviceIsOneNthOfTpsReplicatedLatent) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  ASSERT_TRUE(in.spec.is_mla());
  const double one = parallel_decode(in, kOne, 4, 16384).kv_bytes_per_device;
  EXPECT_NEAR(one, kv_bytes_per_token(in.spec, in.precision.kv) * 16384 * 4, 1);
  EXPECT_DOUBLE_EQ(parallel_decode(in, kTp2, 4, 16384).kv_bytes_per_device, one);  // TP replicates the latent
  for (int64_t n : {2, 4, 8}) {
    const ParallelDecode helix = parallel_decode(in, {n, 1, 1, n}, 4, 16384);
    EXPECT_NEAR(helix.kv_bytes_per_device, one / double(n), one * 1e-12) << n;
    EXPECT_NEAR(kv_bytes_per_token_per_device(in, {n, 1, 1, n}), kv_bytes_per_token(in.spec, in.precision.kv) / double(n), 1e-9);
  }
}

TEST(HelixPlan, WeightsKeepAttentionWholeAndSplitTheRest) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  const double one = weight_bytes_per_device(in, kOne), attn = attention_params(in.spec) * in.precision.weights.bytes();
  EXPECT_NEAR(one, weight_bytes(in.spec, in.precision), 1);
  EXPECT_NEAR(weight_bytes_per_device(in, kHelix2), attn + (one - attn) / 2, 1);
  // ridge's TP keeps MLA attention replicated too: the same bytes per rank.
  EXPECT_NEAR(weight_bytes_per_device(in, kTp2), weight_bytes_per_device(in, kHelix2), 1);
  // On a GQA model TP splits attention and Helix does not.
  const PlanInputs gqa = inputs("llama-3-8b");
  EXPECT_NEAR(weight_bytes_per_device(gqa, kTp2) * 2, weight_bytes_per_device(gqa, kOne), 1);
  EXPECT_GT(weight_bytes_per_device(gqa, kHelix2), weight_bytes_per_device(gqa, kTp2));
}

TEST(HelixPlan, PoolHoldsNTimesTheContext) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  const double pool = 8.0 * (1 << 30);
  const KvCapacity one = parallel_kv_capacity(in, kOne, 16384, pool);
  const KvCapacity tp = parallel_kv_capacity(in, kTp2, 16384, pool);
  EXPECT_EQ(tp.max_context, one.max_context);
  EXPECT_EQ(one.max_context, int64_t(pool / kv_bytes_per_token(in.spec, in.precision.kv)));
  for (int64_t n : {2, 4}) {
    const KvCapacity helix = parallel_kv_capacity(in, {n, 1, 1, n}, 16384, pool);
    EXPECT_NEAR(double(helix.max_context), double(n * one.max_context), double(n)) << n;
    EXPECT_NEAR(double(helix.max_sequences), double(n * one.max_sequences), double(n)) << n;
    EXPECT_DOUBLE_EQ(helix.pool_bytes, pool);
  }
  // Without a budget: each rank's memory after its weights.
  const KvCapacity own = parallel_kv_capacity(in, kHelix2, 16384);
  EXPECT_NEAR(own.pool_bytes, in.hw.memory_bytes - weight_bytes_per_device(in, kHelix2), 1);
}

TEST(HelixPlan, LongContextDecodeReadsLessKvAndPaysAnAllGather) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  for (int64_t batch : {1, 16}) {
    const ParallelDecode tp = parallel_decode(in, kTp2, batch, 131072);
    const ParallelDecode helix = parallel_decode(in, kHelix2, batch, 131072);
    EXPECT_LT(helix.stage_s, tp.stage_s) << batch;  // half the latent KV read on each rank
    EXPECT_GT(helix.comm_s, tp.comm_s) << batch;
    EXPECT_GT(helix.helix_comm_s, 0) << batch;
    EXPECT_EQ(tp.helix_comm_s, 0) << batch;
    EXPECT_LT(helix.step_s, tp.step_s) << batch;
    EXPECT_GT(helix.tok_s_total(), tp.tok_s_total()) << batch;
  }
  // At a short context there is little KV to save: the all-gather makes Helix no faster than TP.
  EXPECT_GE(parallel_decode(in, kHelix2, 1, 0).step_s, parallel_decode(in, kTp2, 1, 0).step_s);
}

TEST(HelixPlan, CommIsPricedWithThePlansCommModel) {
  PlanInputs in = inputs("deepseek-v2-lite");
  in.hw.measured_comm = measured_comm_model({20e-6, 5e9}, {5e-6, 8e9}, 2, "network", "test");
  const CommModel& m = *in.hw.measured_comm;
  const int64_t batch = 8;
  const double act = in.precision.activations.bytes();
  const double hidden = double(batch) * double(in.spec.n_embd) * act;
  const double partials = double(batch) * double(in.spec.n_head) * double(in.spec.kv_lora_rank + 2) * 4;
  EXPECT_DOUBLE_EQ(helix_partial_bytes(in.spec, batch), partials);
  const double layers = double(in.spec.n_layer);
  const double logits = send_seconds(m, double(batch) * double(in.spec.n_vocab) * act / 2);
  const ParallelDecode helix = parallel_decode(in, kHelix2, batch, 4096);
  EXPECT_NEAR(helix.helix_comm_s, layers * all_gather_seconds(m, partials, 2), 1e-12);
  EXPECT_NEAR(helix.comm_s, layers * all_reduce_seconds(m, hidden, 2) + helix.helix_comm_s + logits, 1e-12);
  // TP on MLA: attention replicated, the FFN's all-reduce alone.
  EXPECT_NEAR(parallel_decode(in, kTp2, batch, 4096).comm_s, layers * all_reduce_seconds(m, hidden, 2) + logits, 1e-12);
  // A ring all-gather: (n - 1) blocks per link.
  EXPECT_NEAR(all_gather_seconds(m, 1e6, 4), 20e-6 + 3e6 / m.all_reduce_bus.bandwidth, 1e-15);
  EXPECT_EQ(all_gather_seconds(m, 1e6, 1), 0);
}

TEST(HelixPlan, KvParallelSizeMustEqualTp) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  EXPECT_THROW(parallel_decode(in, {4, 1, 1, 2}, 1, 1024), Error);
  EXPECT_THROW(parallel_decode(in, {1, 1, 1, 2}, 1, 1024), Error);
  EXPECT_THROW(parallel_prefill(in, {4, 1, 1, 2}, 1024), Error);
  EXPECT_THROW(parallel_kv_capacity(in, {2, 1, 1, 4}, 1024), Error);
  EXPECT_THROW(check_parallel_plan({2, 1, 2, 2}), Error);  // not with data-parallel attention
  EXPECT_THROW(check_parallel_plan({2, 1, 1, 0}), Error);
  EXPECT_NO_THROW(check_parallel_plan({4, 2, 1, 4}));
  EXPECT_EQ(describe_plan(kHelix2), "Helix 2");
  EXPECT_EQ(describe_plan({4, 2, 1, 4}), "Helix 4 x PP 2");
  EXPECT_EQ(describe_plan(kOne), "one process");
}

TEST(HelixPlan, PrefillSplitsAttentionAndGathersItsPartials) {
  const PlanInputs in = inputs("deepseek-v2-lite");
  const int64_t prompt = 16384;
  const ParallelPrefill one = parallel_prefill(in, kOne, prompt, 1);
  const ParallelPrefill tp = parallel_prefill(in, kTp2, prompt, 1);
  const ParallelPrefill helix = parallel_prefill(in, kHelix2, prompt, 1);
  const CommModel m = plan_comm_model(in.hw);
  EXPECT_NEAR(helix.helix_comm_s, double(in.spec.n_layer) * all_gather_seconds(m, helix_partial_bytes(in.spec, prompt), 2), 1e-12);
  EXPECT_EQ(tp.helix_comm_s, 0);
  EXPECT_GT(helix.comm_s, tp.comm_s);
  // A long prompt is attention-heavy: TP runs MLA's attention whole on each rank, Helix half of it.
  EXPECT_LT(helix.seconds, tp.seconds);
  EXPECT_LT(helix.seconds, one.seconds);
  EXPECT_GT(helix.seconds, one.seconds / 2);  // the projections stay whole
}

TEST(HelixPlan, GqaWithFewKvHeadsReplicatesUnderTpNotHelix) {
  const PlanInputs in = inputs("qwen2-7b");
  ASSERT_LT(in.spec.n_head_kv, 8);
  const ParallelDecode one = parallel_decode(in, kOne, 1, 65536);
  const ParallelDecode tp = parallel_decode(in, {8, 1, 1, 1}, 1, 65536);
  const ParallelDecode helix = parallel_decode(in, {8, 1, 1, 8}, 1, 65536);
  EXPECT_NEAR(tp.kv_bytes_per_device, one.kv_bytes_per_device / double(in.spec.n_head_kv), 1);
  EXPECT_NEAR(helix.kv_bytes_per_device, one.kv_bytes_per_device / 8, 1);
  const AttentionShare share = attention_share(in.spec, {8, 1, 1, 1});
  EXPECT_DOUBLE_EQ(share.kv, double(in.spec.n_head_kv));
  EXPECT_DOUBLE_EQ(share.heads, 8);
  EXPECT_LT(share.qkv, 8);  // the K/V projections replicated with their heads
  EXPECT_GT(share.qkv, double(in.spec.n_head_kv));
}

TEST(HelixPlan, ReportComparesOneProcessTpAndHelix) {
  PlanInputs in = inputs("deepseek-v2-lite");
  PlanModel model{in.spec, "catalogue", std::nullopt, ""};
  PlanOptions o;
  o.context = 32768;
  o.batches = {1, 8};
  o.parallel = kHelix2;
  o.kv_pool_bytes = 4.0 * (1 << 30);
  o.sections = {"parallel", "kv"};
  const PlanReport r = build_plan_report(in, model, o);
  EXPECT_NE(r.text.find("Helix 2 against TP 2 and one process at context 32768"), std::string::npos) << r.text;
  const auto& helix = r.json["parallel"]["helix"];
  ASSERT_EQ(helix["rows"].size(), 6u);  // batch 1 and 8, three layouts each
  EXPECT_EQ(helix["rows"][0]["layout"], "one process");
  EXPECT_EQ(helix["rows"][1]["layout"], "TP 2");
  EXPECT_EQ(helix["rows"][2]["layout"], "Helix 2");
  EXPECT_EQ(helix["rows"][2]["kvp"], 2);
  EXPECT_NEAR(helix["rows"][2]["max_context"].get<double>(), 2 * helix["rows"][1]["max_context"].get<double>(), 2);
  EXPECT_GT(helix["rows"][2]["helix_comm_s"].get<double>(), 0);
  EXPECT_EQ(helix["prefill"].size(), 3u);
  bool kv_row = false;
  for (const auto& row : r.json["kv"]["rows"]) kv_row |= row["layout"] == "Helix 2" && row["context"] == 32768;
  EXPECT_TRUE(kv_row);
  // Without --helix, no comparison.
  o.parallel = kTp2;
  EXPECT_FALSE(build_plan_report(in, model, o).json["parallel"].contains("helix"));
}

TEST(HelixPlan, LintNamesTheFlag) {
  bool named = false;
  for (const auto& f : lint_model(*named_model_spec("deepseek-v3")))
    if (f.check == "tp.kv_heads") named = f.message.find("--helix N") != std::string::npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace ridge::plan
