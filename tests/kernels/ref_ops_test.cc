// The reference kernels against the textbook formulas, computed independently in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/gelu_table.h"
#include "random_vector.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/matmul.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"

namespace ridge::ref {
namespace {

using testing::random_vector;

TEST(RefMatmul, F32MatchesDoubleDotOverAwkwardShapes) {
  for (auto [rows, cols, tokens] : {std::tuple{1, 1, 1}, {7, 33, 3}, {64, 257, 1}, {5, 4097, 2}}) {
    const auto w = random_vector(size_t(rows * cols), 1);
    const auto x = random_vector(size_t(tokens * cols), 2);
    std::vector<float> y(size_t(tokens * rows));
    matmul({DType::F32, w.data(), rows, cols}, x.data(), tokens, y.data());
    for (int t = 0; t < tokens; ++t)
      for (int r = 0; r < rows; ++r) {
        double expect = 0;
        for (int c = 0; c < cols; ++c) expect += double(w[size_t(r * cols + c)]) * x[size_t(t * cols + c)];
        EXPECT_NEAR(y[size_t(t * rows + r)], expect, 1e-4 * std::sqrt(double(cols))) << rows << "x" << cols;
      }
  }
}

TEST(RefMatmul, F16WeightsAreDecodedBeforeTheDot) {
  const int rows = 3, cols = 5;
  const auto w = random_vector(rows * cols, 3);
  std::vector<uint16_t> w16(w.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = f32_to_f16(w[i]);
  const auto x = random_vector(cols, 4);
  std::vector<float> y(rows);
  matmul({DType::F16, w16.data(), rows, cols}, x.data(), 1, y.data());
  for (int r = 0; r < rows; ++r) {
    double expect = 0;
    for (int c = 0; c < cols; ++c) expect += double(f16_to_f32(w16[size_t(r * cols + c)])) * x[size_t(c)];
    EXPECT_NEAR(y[size_t(r)], expect, 1e-5);
  }
}

TEST(RefNorm, RmsNormScalesToUnitRms) {
  const int n = 1001;
  const auto x = random_vector(2 * n, 5, 3.0f);
  const auto w = random_vector(n, 6);
  std::vector<float> y(x.size());
  rms_norm(x.data(), w.data(), 2, n, 1e-6f, y.data());
  for (int r = 0; r < 2; ++r) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += double(x[size_t(r * n + i)]) * x[size_t(r * n + i)];
    const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(y[size_t(r * n + i)], x[size_t(r * n + i)] * inv * w[size_t(i)], 1e-5);
  }
}

TEST(RefRope, RotatesPairsLikeComplexMultiplication) {
  const int heads = 3, dim = 8, rope_dim = 6;
  const float theta_scale = 0.1f;
  const std::vector<float> factors = {1.0f, 2.0f, 4.0f};
  for (bool neox : {false, true}) {
    auto x = random_vector(heads * dim, 7);
    const auto original = x;
    const int32_t pos = 17;
    rope({heads, dim, rope_dim, neox, theta_scale, factors.data()}, &pos, 1, x.data());
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < rope_dim / 2; ++i) {
        const int a = h * dim + (neox ? i : 2 * i), b = h * dim + (neox ? i + rope_dim / 2 : 2 * i + 1);
        const double angle = pos * std::pow(double(theta_scale), i) / factors[size_t(i)];
        EXPECT_NEAR(x[size_t(a)], original[size_t(a)] * std::cos(angle) - original[size_t(b)] * std::sin(angle), 1e-4);
        EXPECT_NEAR(x[size_t(b)], original[size_t(a)] * std::sin(angle) + original[size_t(b)] * std::cos(angle), 1e-4);
      }
      for (int i = rope_dim; i < dim; ++i) EXPECT_EQ(x[size_t(h * dim + i)], original[size_t(h * dim + i)]);  // unrotated tail
    }
  }
}

TEST(RefActivation, SwiGlu) {
  std::vector<float> gate = {-3.0f, 0.0f, 0.5f, 10.0f}, up = {2.0f, 5.0f, -1.0f, 0.5f};
  const auto g0 = gate;
  swiglu(gate.data(), up.data(), 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(gate[i], g0[i] / (1 + std::exp(-double(g0[i]))) * up[i], 1e-6);
}

// GELU's tanh approximation at points where its value is known: gelu(0) = 0, gelu(x) -> x for
// large x, gelu(-x) -> 0, gelu(1) = 0.841192 (tanh form), times up.
TEST(RefActivation, GeGluIsTheTanhGelu) {
  std::vector<float> gate = {0.0f, 1.0f, -1.0f, 8.0f, -8.0f}, up = {3.0f, 2.0f, 1.0f, 0.5f, 4.0f};
  geglu(gate.data(), up.data(), 5);
  const double expect[] = {0.0, 2 * 0.8411919906082768, -0.15880800939172324, 4.0, 0.0};
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(gate[i], expect[i], 1e-5) << i;
}

// The table GELU (llama.cpp's: input and output rounded to f16) stays within f16 rounding of the
// exact one over the whole range, and is exact outside (-10, 10).
TEST(RefActivation, TableGeGluIsTheTanhGeluWithinF16Rounding) {
  std::vector<float> x, up;
  for (float v = -12.0f; v <= 12.0f; v += 0.0137f) x.push_back(v), up.push_back(1.0f + 0.25f * std::sin(v));
  std::vector<float> exact = x, table = x;
  geglu(exact.data(), up.data(), int64_t(x.size()));
  cpu::geglu_table(table.data(), up.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    // f16 input (relative 2^-11, times GELU's slope <= 1.13) and f16 output (2^-11 relative).
    const float tol = 2.5f * std::ldexp(1.0f, -11) * (std::fabs(exact[i]) + std::fabs(x[i] * up[i])) + 1e-7f;
    ASSERT_NEAR(table[i], exact[i], tol) << "x " << x[i];
    if (std::fabs(x[i]) >= 10.0f) EXPECT_NEAR(table[i], exact[i], 1e-6f * std::fabs(exact[i]) + 1e-6f);
  }
}

TEST(RefActivation, SoftmaxRowsSumToOneAndKeepOrder) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 1000.0f, 1000.0f, -1000.0f};
  softmax(x.data(), 2, 3);
  EXPECT_NEAR(x[0] + x[1] + x[2], 1.0, 1e-6);
  EXPECT_NEAR(x[2] / x[1], std::exp(1.0), 1e-5);
  EXPECT_FLOAT_EQ(x[3], 0.5f);  // large equal logits: no overflow
  EXPECT_FLOAT_EQ(x[5], 0.0f);
}

TEST(RefActivation, SoftcapBoundsByTheCap) {
  std::vector<float> x = {0.0f, 1.0f, 100.0f, -1e6f};
  softcap(x.data(), 4, 30.0f);
  EXPECT_FLOAT_EQ(x[0], 0.0f);
  EXPECT_NEAR(x[1], 30.0 * std::tanh(1.0 / 30.0), 1e-6);
  EXPECT_LT(x[2], 30.0f);
  EXPECT_GT(x[2], 29.0f);
  EXPECT_FLOAT_EQ(x[3], -30.0f);
}

// Causal GQA attention against a direct double-precision evaluation.
TEST(RefAttention, CausalGqaMatchesDirectFormula) {
  const int heads = 6, kv_heads = 2, dim = 5, n_kv = 9, n_tokens = 4;
  const auto k = random_vector(n_kv * kv_heads * dim, 8);
  const auto v = random_vector(n_kv * kv_heads * dim, 9);
  const auto q = random_vector(n_tokens * heads * dim, 10);
  const std::vector<int32_t> positions = {5, 6, 7, 8};  // the batch is the last 4 of 9 positions
  std::vector<float> out(q.size());
  const float scale = 0.37f;
  attention({heads, kv_heads, dim, scale}, q.data(), positions.data(), n_tokens, k.data(), v.data(), n_kv, out.data());
  for (int t = 0; t < n_tokens; ++t)
    for (int h = 0; h < heads; ++h) {
      const int kvh = h / (heads / kv_heads);
      std::vector<double> p;
      double max_s = -1e300;
      for (int j = 0; j <= positions[size_t(t)]; ++j) {
        double s = 0;
        for (int d = 0; d < dim; ++d) s += double(q[size_t((t * heads + h) * dim + d)]) * k[size_t((j * kv_heads + kvh) * dim + d)];
        p.push_back(s * scale);
        max_s = std::max(max_s, p.back());
      }
      double denom = 0;
      for (auto& s : p) denom += s = std::exp(s - max_s);
      for (int d = 0; d < dim; ++d) {
        double o = 0;
        for (size_t j = 0; j < p.size(); ++j) o += p[j] / denom * v[(j * kv_heads + size_t(kvh)) * dim + size_t(d)];
        EXPECT_NEAR(out[size_t((t * heads + h) * dim + d)], o, 1e-5);
      }
    }
}

}  // namespace
}  // namespace ridge::ref
