#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/exp_sum.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {
namespace {

std::vector<float> logits(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 6.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 3; i < n; i += 11) x[size_t(i)] = -inf;  // masked tokens
  if (n > 5) x[5] = -200.0f;                            // underflows to 0
  return x;
}

float max_of(const std::vector<float>& x) { return x.empty() ? 0.0f : *std::max_element(x.begin(), x.end()); }

// Masked tails of every length, -inf entries: the vector kernel adds the scalar one's terms in its order.
TEST(CpuExpSum, VectorHasTheScalarBitsForEveryLength) {
  if (active_isa() != Isa::Avx512Vnni) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (int n : {0, 1, 2, 15, 16, 17, 31, 33, 100, 255, 257, 1000, 4099, 151936}) {
    const std::vector<float> x = logits(n, uint32_t(n + 1));
    const float m = max_of(x);
    EXPECT_EQ(exp_sum(x.data(), n, m), exp_sum_scalar(x.data(), n, m)) << "n=" << n;
  }
}

// Within a few ulp of the double-precision sum of std::exp terms.
TEST(CpuExpSum, ScalarMatchesTheLibraryExponential) {
  for (int n : {1, 7, 64, 1000, 151936}) {
    const std::vector<float> x = logits(n, uint32_t(3 * n));
    const float m = max_of(x);
    double expect = 0.0;
    for (float v : x) expect += std::exp(double(v) - double(m));
    const double got = exp_sum_scalar(x.data(), n, m);
    EXPECT_NEAR(got, expect, 1e-6 * expect) << "n=" << n;
    EXPECT_GE(got, 1.0 - 1e-6);  // the maximum's own term is 1
  }
  // NaN and -inf terms add nothing; an all-masked row sums to 0.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> masked = {-inf, -inf, NAN, -inf};
  EXPECT_EQ(exp_sum_scalar(masked.data(), 4, 0.0f), 0.0);
  EXPECT_EQ(exp_sum(masked.data(), 4, 0.0f), 0.0);
}

}  // namespace
}  // namespace ridge::cpu
