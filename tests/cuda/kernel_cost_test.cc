// Byte and FLOP accounting of the CUDA kernels: the formulas and the per-family ledger.
#include <gtest/gtest.h>

#include "backend/kernel_cost.h"

namespace ridge {
namespace {

TEST(CudaKernelCost, MatmulCountsWeightsOnceAndActivationsPerToken) {
  // Llama-3-8B's down projection in Q4_0 (4.5 bits per weight), one token, residual accumulated.
  const int64_t rows = 4096, cols = 14336, weight_bytes = rows * cols / 32 * 18;
  const KernelCost c = matmul_cost(weight_bytes, rows, cols, 1, 1, true);
  EXPECT_DOUBLE_EQ(c.bytes, double(weight_bytes) + double(cols) + double(rows) * 8.0);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * rows * cols);
  const KernelCost batch = matmul_cost(weight_bytes, rows, cols, 32, 1, false);
  EXPECT_DOUBLE_EQ(batch.flops, 32 * c.flops);
  EXPECT_LT(batch.bytes, 2 * c.bytes);  // the weights dominate and are read once per launch
}

TEST(CudaKernelCost, AttentionFlopsFollowTheAttendedPositions) {
  const KernelCost c = attention_cost(/*tokens*/ 2, /*heads*/ 32, /*dim*/ 128, /*attended*/ 1000, /*kv bytes*/ 1 << 20);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 32 * 128 * 1000);
  EXPECT_DOUBLE_EQ(c.bytes, double(1 << 20) + 2.0 * 2 * 32 * 128 * 4);
}

TEST(CudaKernelCost, LedgerSumsPerFamilyAndScales) {
  CostLedger l;
  l.add(KernelKind::Gemv, {100, 10, 1});
  l.add(KernelKind::Gemv, {50, 5, 1});
  l.add(KernelKind::Norm, elementwise_cost(10, 1, 1, 4));
  EXPECT_DOUBLE_EQ(l[KernelKind::Gemv].bytes, 150);
  EXPECT_EQ(l[KernelKind::Gemv].launches, 2);
  EXPECT_DOUBLE_EQ(l[KernelKind::Norm].bytes, 80);
  EXPECT_DOUBLE_EQ(l.total().bytes, 230);
  EXPECT_DOUBLE_EQ(l.total().flops, 55);
  const CostLedger half = l.scaled(0.5);
  EXPECT_DOUBLE_EQ(half.total().bytes, 115);
  CostLedger sum;
  sum.add(l);
  sum.add(l);
  EXPECT_DOUBLE_EQ(sum[KernelKind::Gemv].flops, 30);
  for (int k = 0; k < kKernelKinds; ++k) EXPECT_NE(kernel_kind_name(KernelKind(k)), "?");
}

}  // namespace
}  // namespace ridge
