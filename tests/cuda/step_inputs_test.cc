// The integers a device step uploads, built from a ragged batch: positions, KV slots through the
// block tables, table offsets, wanted logits rows, and the padding of a decode graph bucket.
#include <gtest/gtest.h>

#include "backend/step_inputs.h"
#include "core/error.h"

namespace ridge {
namespace {

TEST(CudaStepInputs, RaggedBatchMapsEveryTokenToItsSlotAndTable) {
  const std::vector<BlockId> a = {7, 2, 9}, b = {4}, c = {5, 6};
  const std::vector<int32_t> tokens = {10, 11, 12, 20, 30, 31};
  const std::vector<SequenceRun> runs = {{3, 30, a, LogitsWanted::Last},   // positions 30..32 (blocks 1 and 2)
                                         {1, 0, b, LogitsWanted::None},
                                         {2, 14, c, LogitsWanted::All}};  // 14, 15 in block 0 of c
  const StepInputs in = build_step_inputs(TokenBatch{tokens, runs}, 16, 10, 100);
  EXPECT_EQ(in.n_tokens(), 6);
  EXPECT_EQ(in.n_real, 6);
  EXPECT_EQ(in.tokens, tokens);
  EXPECT_EQ(in.positions, (std::vector<int32_t>{30, 31, 32, 0, 14, 15}));
  EXPECT_EQ(in.slots, (std::vector<int32_t>{2 * 16 + 14, 2 * 16 + 15, 9 * 16 + 0, 4 * 16, 5 * 16 + 14, 5 * 16 + 15}));
  EXPECT_EQ(in.tables, (std::vector<int32_t>{7, 2, 9, 4, 5}));  // each run's blocks up to its last position
  EXPECT_EQ(in.table_offsets, (std::vector<int32_t>{0, 0, 0, 3, 4, 4}));
  EXPECT_EQ(in.logit_rows, (std::vector<int32_t>{2, 4, 5}));
  EXPECT_EQ(in.max_position, 32);
  EXPECT_EQ(in.attended, 31 + 32 + 33 + 1 + 15 + 16);
  EXPECT_EQ(in.kv_positions, 33 + 1 + 16);
}

TEST(CudaStepInputs, DecodeBucketPaddingWritesNoKv) {
  const std::vector<BlockId> a = {3}, b = {8};
  const std::vector<int32_t> tokens = {5, 6};
  const std::vector<SequenceRun> runs = {{1, 4, a, LogitsWanted::Last}, {1, 9, b, LogitsWanted::Last}};
  ASSERT_TRUE(is_decode_batch(TokenBatch{tokens, runs}));
  const StepInputs in = build_step_inputs(TokenBatch{tokens, runs}, 16, 10, 100, 4);
  EXPECT_EQ(in.n_tokens(), 4);
  EXPECT_EQ(in.n_real, 2);
  EXPECT_EQ(in.tokens, (std::vector<int32_t>{5, 6, 0, 0}));
  EXPECT_EQ(in.positions, (std::vector<int32_t>{4, 9, 0, 0}));
  EXPECT_EQ(in.slots, (std::vector<int32_t>{3 * 16 + 4, 8 * 16 + 9, -1, -1}));
  ASSERT_EQ(in.tables.size(), 3u);
  EXPECT_EQ(in.tables[2], 0);  // the padding's table: block 0, read and ignored
  EXPECT_EQ(in.table_offsets, (std::vector<int32_t>{0, 1, 2, 2}));
  EXPECT_EQ(in.logit_rows, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(in.attended, 5 + 10);  // padding is not counted as work
}

TEST(CudaStepInputs, PrefillIsNotADecodeBatchAndBadBatchesFail) {
  const std::vector<BlockId> a = {1};
  const std::vector<int32_t> tokens = {1, 2};
  const std::vector<SequenceRun> runs = {{2, 0, a, LogitsWanted::Last}};
  EXPECT_FALSE(is_decode_batch(TokenBatch{tokens, runs}));
  EXPECT_NO_THROW(build_step_inputs(TokenBatch{tokens, runs}, 16, 2, 3));
  const std::vector<SequenceRun> past = {{2, 15, a, LogitsWanted::Last}};  // position 16 needs a second block
  EXPECT_THROW(build_step_inputs(TokenBatch{tokens, past}, 16, 2, 3), Error);
  EXPECT_THROW(build_step_inputs(TokenBatch{tokens, runs}, 16, 1, 3), Error);  // block 1 outside a pool of 1
  EXPECT_THROW(build_step_inputs(TokenBatch{tokens, runs}, 16, 2, 2), Error);  // id 2 outside a vocabulary of 2
  const std::vector<SequenceRun> short_runs = {{1, 0, a, LogitsWanted::Last}};
  EXPECT_THROW(build_step_inputs(TokenBatch{tokens, short_runs}, 16, 2, 3), Error);  // a token no run covers
  const std::vector<SequenceRun> long_runs = {{3, 0, a, LogitsWanted::Last}};
  EXPECT_THROW(build_step_inputs(TokenBatch{tokens, long_runs}, 16, 2, 3), Error);
}

}  // namespace
}  // namespace ridge
