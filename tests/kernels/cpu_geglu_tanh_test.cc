// GeGLU with GELU's tanh form (Gemma's gelu_pytorch_tanh): within a few ulp of the formula in
// double, and the AVX-512 kernel with the scalar one's bits in every lane for every length.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/geglu_tanh.h"
#include "kernels/cpu/isa.h"
#include "kernels/ref/activation.h"

namespace ridge::cpu {
namespace {

std::vector<float> awkward_gates(int n) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> g(static_cast<size_t>(n));
  for (auto& x : g) x = normal(rng);
  const float specials[] = {0.0f,  -0.0f, 1e-30f, -1e-30f, 5.0f,  -5.0f, 9.9f,
                            -9.9f, 40.0f, -40.0f, 1e4f,    -1e4f, 1e20f, -1e20f};
  for (size_t i = 0; i < std::size(specials) && i < g.size(); ++i) g[i * 7 % g.size()] = specials[i];
  return g;
}

// x · σ(2u), u = √(2/π)(x + 0.044715 x³): 0.5 x (1 + tanh u) without its cancellation for x << 0.
double gelu_tanh(double x) { return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

TEST(CpuGegluTanh, ScalarIsWithinAFewUlpOfTheFormula) {
  const std::vector<float> g = awkward_gates(20000);
  std::vector<float> up(g.size(), 1.0f), y = g, ref_y = g;
  geglu_tanh_scalar(y.data(), up.data(), int64_t(y.size()));
  ref::geglu(ref_y.data(), up.data(), int64_t(ref_y.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i], expect = gelu_tanh(x);
    EXPECT_NEAR(y[i], ref_y[i], 2e-6f * std::max(1.0f, std::fabs(g[i]))) << "g " << g[i];  // torch's form in f32
    if (std::fabs(expect) < 1e-37) {
      EXPECT_LE(std::fabs(y[i]), 1e-37f) << g[i];
      continue;
    }
    // The exponent 2u is rounded to f32 first: its relative error of an ulp or two becomes |2u|
    // ulp of e^2u, which matters where the result is e^2u-small (x below about -3).
    const double z = 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    const double ulp = std::ldexp(1.0, std::ilogb(expect) - 23);
    EXPECT_LE(std::fabs(double(y[i]) - expect), (6.0 + 2.0 * std::fabs(std::min(z, 0.0))) * ulp) << "g " << g[i];
  }
}

TEST(CpuGegluTanh, VectorHasTheScalarBitsForEveryLength) {
  if (active_isa() != Isa::Avx512Vnni) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (int n : {1, 5, 15, 16, 17, 31, 33, 1152, 4099}) {
    const std::vector<float> g = awkward_gates(n);
    std::vector<float> up(g.size());
    for (auto& x : up) x = normal(rng);
    std::vector<float> wide = g, scalar = g;
    geglu_tanh_avx512(wide.data(), up.data(), n);
    geglu_tanh_scalar(scalar.data(), up.data(), n);
    ASSERT_EQ(0, std::memcmp(wide.data(), scalar.data(), wide.size() * sizeof(float))) << "n " << n;
    geglu_tanh(wide.data(), up.data(), 0);  // nothing to do
  }
}

}  // namespace
}  // namespace ridge::cpu
