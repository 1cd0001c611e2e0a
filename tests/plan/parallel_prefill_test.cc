// A prompt through pipeline stages as ridge runs it: unchunked, the stages run one after another;
// in chunks they overlap, bounded by the one-process time spread over the stages; one stage and one
// piece is the single-process prefill.
#include <gtest/gtest.h>

#include "plan/hardware.h"
#include "plan/model_catalog.h"
#include "plan/scaling.h"

namespace ridge::plan {
namespace {

PlanInputs inputs() {
  PlanInputs in;
  in.spec = *named_model_spec("tinyllama-1.1b");
  in.precision.kv = in.precision.activations = number_format("f32");
  in.hw = find_hardware("H100");
  in.hw.measured_comm = measured_comm_model({5e-6, 20e9}, {2e-6, 40e9}, 2, "network", "test");  // ranks apart
  return in;
}

TEST(ParallelPrefill, OneStageOnePieceIsTheSingleProcessPrefill) {
  const PlanInputs in = inputs();
  const ParallelPrefill one = parallel_prefill(in, {1, 1, 1, 1}, 2048, 1);
  EXPECT_NEAR(one.seconds, prefill_point(in, 2048).time.seconds, 1e-9);
  EXPECT_EQ(one.comm_s, 0.0);
}

TEST(ParallelPrefill, ChunksOverlapTheStages) {
  const PlanInputs in = inputs();
  const double alone = prefill_point(in, 2048).time.seconds;
  const ParallelPrefill whole = parallel_prefill(in, {1, 2, 1, 1}, 2048, 1);
  const ParallelPrefill chunked = parallel_prefill(in, {1, 2, 1, 1}, 2048, 0);
  EXPECT_EQ(chunked.pieces, 8);  // ridge's default: 256-token chunks
  // Unchunked, stage 2 waits for all of stage 1: the whole prompt's time, and a hop.
  EXPECT_NEAR(whole.seconds, alone, alone * 0.05);
  EXPECT_LT(chunked.seconds, 0.7 * whole.seconds);
  EXPECT_GT(chunked.seconds, 0.5 * alone);  // two stages at most halve it
  EXPECT_GT(chunked.comm_s, whole.comm_s);  // more, smaller hops
}

}  // namespace
}  // namespace ridge::plan
