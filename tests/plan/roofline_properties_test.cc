// Properties the cost model must keep whatever the model: the roofline is a lower bound, time grows
// with batch and context, KV grows linearly with context, MoE and MLA shapes count as designed.
#include <gtest/gtest.h>

#include "plan/model_catalog.h"
#include "plan/scaling.h"
#include "plan/serving.h"

namespace ridge::plan {
namespace {

std::vector<PlanInputs> all_setups() {
  std::vector<PlanInputs> out;
  for (const auto& name : named_model_names()) {
    for (const char* hw : {"H100 SXM", "B200", "GB300"}) {
      for (const char* weights : {"bf16", "fp8", "nvfp4", "q4_k"}) {
        PlanInputs in;
        in.spec = *named_model_spec(name);
        in.hw = find_hardware(hw);
        in.precision.weights = number_format(weights);
        out.push_back(in);
      }
    }
  }
  return out;
}

TEST(RooflineProperties, StepNeverBelowEitherBound) {
  for (const auto& in : all_setups()) {
    for (int64_t batch : {1, 7, 64, 512}) {
      for (int64_t ctx : {0, 1000, 32768}) {
        const DecodePoint p = decode_point(in, batch, ctx);
        const double bytes_bound = p.cost.bytes() / in.hw.memory_bw;
        // Every FLOP at the fastest rate the device has.
        const double fastest = std::max({in.hw.peak(ComputeClass::FP4), in.hw.peak(ComputeClass::FP8), in.hw.peak(ComputeClass::BF16)});
        const double flops_bound = p.cost.flops() / fastest;
        EXPECT_GE(p.time.seconds * (1 + 1e-12), bytes_bound) << in.spec.name;
        EXPECT_GE(p.time.seconds * (1 + 1e-12), flops_bound) << in.spec.name;
        EXPECT_GE(p.time.seconds * (1 + 1e-12), std::max(p.time.memory_s, p.time.compute_s));
      }
    }
  }
}

TEST(RooflineProperties, MonotoneInBatchAndContext) {
  for (const auto& in : all_setups()) {
    double last = 0;
    for (int64_t batch : {1, 2, 3, 8, 33, 128, 1000}) {
      const double t = decode_point(in, batch, 4096).time.seconds;
      EXPECT_GE(t, last) << in.spec.name << " batch " << batch;
      last = t;
    }
    last = 0;
    for (int64_t ctx : {0, 1, 100, 4096, 65536}) {
      const double t = decode_point(in, 16, ctx).time.seconds;
      EXPECT_GE(t, last) << in.spec.name << " context " << ctx;
      last = t;
    }
    last = 0;
    for (int64_t prompt : {1, 16, 512, 4096}) {
      const double t = prefill_point(in, prompt).time.seconds;
      EXPECT_GE(t, last) << in.spec.name << " prompt " << prompt;
      last = t;
    }
  }
}

TEST(RooflineProperties, KvLinearInContext) {
  for (const auto& name : named_model_names()) {
    PlanInputs in;
    in.spec = *named_model_spec(name);
    in.hw = find_hardware("H200");
    const double one = kv_ledger(in, 1).bytes_per_sequence;
    EXPECT_GT(one, 0);
    for (int64_t ctx : {2, 1000, 131072}) EXPECT_DOUBLE_EQ(kv_ledger(in, ctx).bytes_per_sequence, one * double(ctx)) << name;
    // And the decode step's KV traffic grows by exactly one token's KV per extra cached position.
    const double a = decode_point(in, 1, 100).cost.kv_bytes(), b = decode_point(in, 1, 101).cost.kv_bytes();
    EXPECT_NEAR(b - a, one, one * 1e-9) << name;
  }
}

TEST(RooflineProperties, MlaCachesTheLatentNotTheHeads) {
  const ModelSpec ds = *named_model_spec("deepseek-v3");
  // (512 latent + 64 RoPE key) x 61 layers, in BF16: 70 KB per token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(ds, number_format("bf16")), 576.0 * 61 * 2);
}

TEST(RooflineProperties, MoeTouchesExpertsByBatch) {
  const ModelSpec ds = *named_model_spec("deepseek-v3");
  EXPECT_DOUBLE_EQ(experts_touched(ds, 1), 8);
  EXPECT_GT(experts_touched(ds, 64), 200);
  EXPECT_LE(experts_touched(ds, 100000), 256);
  // Weight bytes per step grow with batch until every expert is read.
  PlanInputs in;
  in.spec = ds;
  in.hw = find_hardware("B200");
  EXPECT_LT(decode_point(in, 1, 0).cost.weight_bytes(), decode_point(in, 256, 0).cost.weight_bytes());
  EXPECT_NEAR(decode_point(in, 4096, 0).cost.weight_bytes() / 2, param_count(ds).total() - param_count(ds).token_embedding,
              param_count(ds).total() * 0.001);
}

TEST(RooflineProperties, TensorParallelSplitsWeightsAndAddsComm) {
  PlanInputs in;
  in.spec = *named_model_spec("llama-3-70b");
  in.hw = find_hardware("H100");
  const ParallelDecode one = parallel_decode(in, {1, 1, 1, 1}, 1, 0);
  const ParallelDecode eight = parallel_decode(in, {8, 1, 1, 1}, 1, 0);
  EXPECT_NEAR(eight.weight_bytes_per_device * 8, one.weight_bytes_per_device, one.weight_bytes_per_device * 1e-9);
  EXPECT_GT(eight.comm_s, 0);
  EXPECT_GT(eight.tok_s_per_stream(), 5 * one.tok_s_per_stream());  // "nearly 8x the single-stream ceiling"
  EXPECT_LT(eight.tok_s_per_stream(), 8 * one.tok_s_per_stream());
}

TEST(RooflineProperties, SpeculationHelpsMostAtLowBatch) {
  PlanInputs in;
  in.spec = *named_model_spec("llama-3-8b");
  in.hw = find_hardware("H100");
  const SpeculativeDecode sd{0.8, 4, 0.05};
  const double low = speculative_decode(in, sd, 1, 1024).speedup;
  const double high = speculative_decode(in, sd, 512, 1024).speedup;
  EXPECT_GT(low, 2.0);
  EXPECT_LT(high, low);
}

TEST(RooflineProperties, SloBatchMeetsTheSloAndFits) {
  PlanInputs in;
  in.spec = *named_model_spec("llama-3-8b");
  in.hw = find_hardware("H100");
  const SloBatch r = largest_batch_within_slo(in, 0.030, 4096);
  ASSERT_GT(r.batch, 0);
  EXPECT_LE(r.point.time.seconds, 0.030);
  EXPECT_LE(r.batch, r.memory_limit);
  if (r.slo_bound) {
    EXPECT_GT(decode_point(in, r.batch + 1, 4096).time.seconds, 0.030);
  }
}

}  // namespace
}  // namespace ridge::plan
