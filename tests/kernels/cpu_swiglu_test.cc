#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/swiglu.h"

namespace ridge::cpu {
namespace {

std::vector<float> awkward_gates(int n) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> g(static_cast<size_t>(n));
  for (auto& x : g) x = normal(rng);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 87.0f, -87.0f, 88.0f, -88.0f, 100.0f, -100.0f, -200.0f, inf, -inf, NAN};
  for (size_t i = 0; i < std::size(specials) && i < g.size(); ++i) g[i * 7 % g.size()] = specials[i];
  return g;
}

// Within a few ulp of g / (1 + e^-g) · up wherever that is a normal float (0 where it is tiny).
TEST(CpuSwiglu, ScalarIsWithinFourUlpOfTheFormula) {
  const std::vector<float> g = awkward_gates(20000);
  std::vector<float> up(g.size(), 1.0f), y = g;
  swiglu_scalar(y.data(), up.data(), int64_t(y.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double expect = double(g[i]) / (1.0 + std::exp(-double(g[i])));
    if (std::isnan(g[i]) || std::isinf(g[i]) && g[i] < 0) {
      EXPECT_TRUE(std::isnan(y[i])) << g[i];
      continue;
    }
    if (std::isinf(g[i])) {
      EXPECT_EQ(y[i], g[i]);
      continue;
    }
    if (std::fabs(expect) < 1e-36) {
      EXPECT_LE(std::fabs(y[i]), 1e-36f) << g[i];
      continue;
    }
    const double ulp = std::ldexp(1.0, std::ilogb(expect) - 23);
    EXPECT_LE(std::fabs(double(y[i]) - expect), 4 * ulp) << "g " << g[i];
  }
}

// The vector kernel of the active ISA (AVX-512 or AVX2) has the scalar one's bits in every lane, for every length.
TEST(CpuSwiglu, VectorHasTheScalarBitsForEveryLength) {
  using Kernel = void (*)(float*, const float*, int64_t);
  std::vector<std::pair<const char*, Kernel>> kernels;
  if (isa_supported(Isa::Avx2)) kernels.push_back({"avx2", swiglu_avx2});
  if (isa_supported(Isa::Avx512Vnni)) kernels.push_back({"avx512", swiglu_avx512});
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (const auto& [name, swiglu] : kernels)
  for (int n : {0, 1, 5, 15, 16, 17, 31, 33, 1536, 4099}) {
    const std::vector<float> g = awkward_gates(n > 0 ? n : 1);
    std::vector<float> up(g.size());
    for (auto& x : up) x = normal(rng);
    std::vector<float> wide = g, scalar = g;
    wide.push_back(7.0f);  // not written past n
    swiglu(wide.data(), up.data(), n);
    swiglu_scalar(scalar.data(), up.data(), n);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(wide[size_t(i)]), std::bit_cast<uint32_t>(scalar[size_t(i)]))
          << name << " n " << n << " i " << i << " g " << g[size_t(i)];
    ASSERT_EQ(wide[g.size()], 7.0f) << n;
    if (n == 0) ASSERT_EQ(std::bit_cast<uint32_t>(wide[0]), std::bit_cast<uint32_t>(g[0]));
  }
}

}  // namespace
}  // namespace ridge::cpu
