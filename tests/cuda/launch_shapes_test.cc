// The CUDA pass's step-dependent launch shapes, checked on the host: graph buckets, GEMV or GEMM,
// and attention's split-K.
#include <gtest/gtest.h>

#include "backend/launch_shapes.h"

namespace ridge {
namespace {

TEST(CudaLaunchShapes, DecodeBucketIsTheSmallestThatHolds) {
  EXPECT_EQ(decode_bucket(0), std::nullopt);
  EXPECT_EQ(decode_bucket(1), 1);
  EXPECT_EQ(decode_bucket(2), 2);
  EXPECT_EQ(decode_bucket(3), 4);
  EXPECT_EQ(decode_bucket(8), 8);
  EXPECT_EQ(decode_bucket(9), 16);
  EXPECT_EQ(decode_bucket(100), 128);
  EXPECT_EQ(decode_bucket(128), 128);
  EXPECT_EQ(decode_bucket(129), std::nullopt);
  for (int64_t n = 1; n <= 128; ++n) {
    const int b = *decode_bucket(n);
    EXPECT_GE(b, n);
    EXPECT_LT(b, 2 * n);  // padding never doubles the work
  }
}

TEST(CudaLaunchShapes, GemvBelowTheGemmThreshold) {
  EXPECT_EQ(matmul_path(1, 16), MatmulPath::Gemv);
  EXPECT_EQ(matmul_path(15, 16), MatmulPath::Gemv);
  EXPECT_EQ(matmul_path(16, 16), MatmulPath::Gemm);
  EXPECT_EQ(matmul_path(4096, 16), MatmulPath::Gemm);
}

TEST(CudaLaunchShapes, AttentionSplitsFillTheGpuAndCoverEveryPosition) {
  constexpr int kSms = 132, kTile = 64;
  // Enough blocks already, or a short history: no split.
  EXPECT_EQ(attention_split(8192, 128, 8, kSms).n_splits, 1);
  EXPECT_EQ(attention_split(200, 1, 8, kSms).n_splits, 1);
  for (int64_t positions : {257, 1000, 4096, 8192, 131072})
    for (int64_t tokens : {1, 2, 4, 16})
      for (int64_t kv_heads : {1, 3, 8}) {
        const AttentionSplit s = attention_split(positions, tokens, kv_heads, kSms);
        ASSERT_GE(s.n_splits, 1);
        ASSERT_LE(s.n_splits, 64);
        if (s.n_splits == 1) continue;
        EXPECT_EQ(s.split_size % kTile, 0);
        EXPECT_GE(s.split_size, 256);
        EXPECT_GE(int64_t(s.n_splits) * s.split_size, positions) << positions;          // every position covered
        EXPECT_LT(int64_t(s.n_splits - 1) * s.split_size, positions) << positions;      // no split wholly empty
        EXPECT_LT(tokens * kv_heads * s.n_splits, 2 * kSms + tokens * kv_heads);  // about two blocks per SM
      }
  // Single-stream decode of a long context on Llama-3-8B's 8 kv heads: about two blocks per SM.
  const AttentionSplit s = attention_split(8192, 1, 8, kSms);
  EXPECT_EQ(s.n_splits, 32);
  EXPECT_EQ(s.split_size, 256);
}

}  // namespace
}  // namespace ridge
