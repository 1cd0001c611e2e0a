// The mirror of the reference's arithmetic (kernels/mirror): each kernel against its stated
// rounding order, written out here one lane at a time (bit for bit), and against the textbook
// formula in double (close). Bit-equality with the reference itself is the conformance suite's
// job (tests/conformance/test_forward.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "random_vector.h"
#include "kernels/mirror/ggml_mirror.h"

namespace ridge::mirror {
namespace {

using testing::random_vector;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Q4_1 rows in GGUF layout: f16 scale, f16 minimum, 16 bytes of nibbles (values 0..15 low, 16..31 high).
std::vector<uint8_t> random_q4_1(int64_t n_blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> row(size_t(n_blocks * 20));
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint16_t d = f32_to_f16(std::uniform_real_distribution<float>(0.001f, 0.05f)(rng));
    const uint16_t m = f32_to_f16(std::uniform_real_distribution<float>(-0.4f, 0.0f)(rng));
    std::memcpy(&row[size_t(b * 20)], &d, 2);
    std::memcpy(&row[size_t(b * 20 + 2)], &m, 2);
    for (int j = 0; j < 16; ++j) row[size_t(b * 20 + 4 + j)] = uint8_t(rng());
  }
  return row;
}

float lanes_summed(const float* v) { return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7])); }

TEST(Mirror, QuantizersRoundHalfToEvenFromTheUnroundedScale) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // scale 1: every value is its own quant before rounding
  x[1] = 2.5f;
  x[2] = 3.5f;
  x[3] = -2.5f;
  x[4] = 0.49f;
  BlockQ8_1 q{};
  quantize_q8_1(x.data(), 32, &q);
  EXPECT_EQ(q.qs[0], 127);
  EXPECT_EQ(q.qs[1], 2);  // ties to even, not away from zero
  EXPECT_EQ(q.qs[2], 4);
  EXPECT_EQ(q.qs[3], -2);
  EXPECT_EQ(q.qs[4], 0);
  EXPECT_EQ(f16_to_f32(q.d), 1.0f);
  EXPECT_EQ(f16_to_f32(q.s), 131.0f);

  // The sum is scaled by the f32 scale, then rounded once to f16.
  const auto y = random_vector(96, 3);
  std::vector<BlockQ8_1> q1(3);
  std::vector<BlockQ8_0> q0(3);
  quantize_q8_1(y.data(), 96, q1.data());
  quantize_q8_0(y.data(), 96, q0.data());
  for (int b = 0; b < 3; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(y[size_t(b * 32 + j)]));
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      EXPECT_EQ(q1[size_t(b)].qs[j], q0[size_t(b)].qs[j]);
      EXPECT_NEAR(q1[size_t(b)].qs[j], y[size_t(b * 32 + j)] * 127.0f / amax, 0.5f + 1e-4f);
      sum += q1[size_t(b)].qs[j];
    }
    EXPECT_EQ(q1[size_t(b)].d, f32_to_f16(amax / 127.0f));
    EXPECT_EQ(q1[size_t(b)].s, f32_to_f16(amax / 127.0f * float(sum)));
  }

  const std::vector<float> zeros(32, 0.0f);
  quantize_q8_1(zeros.data(), 32, &q);
  EXPECT_EQ(q.d, 0);
  EXPECT_EQ(q.s, 0);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(q.qs[j], 0);
}

TEST(Mirror, Q4_1DotFollowsItsLaneOrderBitForBit) {
  for (int64_t n_blocks : {1, 3, 18, 48, 129}) {
    const auto row = random_q4_1(n_blocks, uint32_t(n_blocks));
    const auto x = random_vector(size_t(n_blocks * 32), 7);
    std::vector<BlockQ8_1> act(static_cast<size_t>(n_blocks));
    quantize_q8_1(x.data(), n_blocks * 32, act.data());

    float lanes[8] = {}, minimums = 0.0f;
    double exact = 0.0;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint8_t* blk = &row[size_t(b * 20)];
      uint16_t d16, m16;
      std::memcpy(&d16, blk, 2);
      std::memcpy(&m16, blk + 2, 2);
      const float scale = f16_to_f32(d16) * f16_to_f32(act[size_t(b)].d);
      minimums = std::fma(f16_to_f32(m16), f16_to_f32(act[size_t(b)].s), minimums);
      for (int l = 0; l < 8; ++l) {
        int32_t sum = 0;
        for (int e = 4 * l; e < 4 * l + 4; ++e) {
          const int w = e < 16 ? blk[4 + e] & 15 : blk[4 + e - 16] >> 4;
          sum += w * act[size_t(b)].qs[e];
          exact += (double(f16_to_f32(d16)) * w + f16_to_f32(m16)) * f16_to_f32(act[size_t(b)].d) * act[size_t(b)].qs[e];
        }
        lanes[l] = std::fma(scale, float(sum), lanes[l]);
      }
    }
    const float got = dot_q4_1_q8_1(row.data(), act.data(), n_blocks);
    EXPECT_EQ(bits(got), bits(lanes_summed(lanes) + minimums)) << n_blocks;
    // Close to the dot of the dequantized values, up to the f16 rounding of s (one per block).
    EXPECT_NEAR(got, exact, 2e-3 * std::sqrt(double(n_blocks)) + 1e-4 * std::fabs(exact)) << n_blocks;
  }
}

TEST(Mirror, Q8_0DotFollowsItsLaneOrderBitForBit) {
  for (int64_t n_blocks : {1, 2, 18, 77}) {
    std::mt19937 rng(static_cast<uint32_t>(n_blocks));
    std::vector<uint8_t> row(size_t(n_blocks * 34));
    for (int64_t b = 0; b < n_blocks; ++b) {
      const uint16_t d = f32_to_f16(0.01f + 0.001f * float(b % 7));
      std::memcpy(&row[size_t(b * 34)], &d, 2);
      // Includes -128, which the reference's sign trick must still multiply exactly.
      for (int j = 0; j < 32; ++j) row[size_t(b * 34 + 2 + j)] = uint8_t(j == 5 ? 0x80 : rng());
    }
    const auto x = random_vector(size_t(n_blocks * 32), 11);
    std::vector<BlockQ8_0> act(static_cast<size_t>(n_blocks));
    quantize_q8_0(x.data(), n_blocks * 32, act.data());
    float lanes[8] = {};
    for (int64_t b = 0; b < n_blocks; ++b) {
      uint16_t d16;
      std::memcpy(&d16, &row[size_t(b * 34)], 2);
      const float scale = f16_to_f32(d16) * f16_to_f32(act[size_t(b)].d);
      for (int l = 0; l < 8; ++l) {
        int32_t sum = 0;
        for (int e = 4 * l; e < 4 * l + 4; ++e) sum += int8_t(row[size_t(b * 34 + 2 + e)]) * act[size_t(b)].qs[e];
        lanes[l] = std::fma(scale, float(sum), lanes[l]);
      }
    }
    EXPECT_EQ(bits(dot_q8_0_q8_0(row.data(), act.data(), n_blocks)), bits(lanes_summed(lanes))) << n_blocks;
  }
}

TEST(Mirror, ExpApproximationIsWithinTwoUlpAndSaturatesCleanly) {
  double worst = 0.0;
  for (float x = -103.0f; x < 88.0f; x += 0.0137f) {
    const double want = std::exp(double(x));
    const float got = exp_approx(x);
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    if (want > 1e-37) worst = std::max(worst, std::fabs(got - want) / ulp);  // normal results
  }
  EXPECT_LE(worst, 2.0);  // documented: 1.45 + 0.5 ulp
  EXPECT_EQ(exp_approx(0.0f), 1.0f);
  EXPECT_EQ(exp_approx(-INFINITY), 0.0f);  // masked attention slots weigh nothing
  EXPECT_EQ(exp_approx(-200.0f), 0.0f);
  EXPECT_TRUE(std::isinf(exp_approx(100.0f)));
  EXPECT_NEAR(silu(1.0f), 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_EQ(silu(0.0f), 0.0f);
}

TEST(Mirror, F16DotsAreCloseInBothOrdersAndZeroTailsChangeNothing) {
  for (int64_t n : {8, 64, 96, 256}) {
    auto x = random_vector(size_t(n), 21), y = random_vector(size_t(n), 22);
    for (auto& v : x) v = round_to_f16(v);
    for (auto& v : y) v = round_to_f16(v);
    double want = 0.0;
    for (int64_t i = 0; i < n; ++i) want += double(x[size_t(i)]) * y[size_t(i)];
    for (DotOrder order : {DotOrder::Tiled, DotOrder::Vector})
      EXPECT_NEAR(dot_f16(x.data(), 1, y.data(), n, order), want, 1e-5 * std::sqrt(double(n))) << n;
  }
  // The reference's cache is padded to 256 slots with zero weight: dotting fewer values is the same.
  auto x = random_vector(256, 31), y = random_vector(256, 32);
  for (int64_t i = 37; i < 256; ++i) y[size_t(i)] = 0.0f;
  for (DotOrder order : {DotOrder::Tiled, DotOrder::Vector})
    EXPECT_EQ(bits(dot_f16(x.data(), 1, y.data(), 37, order)), bits(dot_f16(x.data(), 1, y.data(), 256, order)));
  // A strided x reads the same values.
  std::vector<float> strided(256 * 3);
  for (int64_t i = 0; i < 256; ++i) strided[size_t(i * 3)] = x[size_t(i)];
  EXPECT_EQ(bits(dot_f16(strided.data(), 3, y.data(), 256, DotOrder::Vector)),
            bits(dot_f16(x.data(), 1, y.data(), 256, DotOrder::Vector)));
}

TEST(Mirror, NormAndRopeMatchTheFormulasClosely) {
  const int64_t n = 576;
  const auto x = random_vector(size_t(n), 41), w = random_vector(size_t(n), 42);
  std::vector<float> y(static_cast<size_t>(n));
  rms_norm_mul(x.data(), w.data(), n, 1e-5f, y.data());
  double ss = 0.0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / double(n) + 1e-5);
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[size_t(i)], x[size_t(i)] * scale * w[size_t(i)], 1e-5) << i;

  const int64_t heads = 3, dim = 64;
  for (int64_t rope_dim : {64, 32})
    for (int32_t pos : {0, 1, 17, 1000}) {
      auto v = random_vector(size_t(heads * dim), uint32_t(pos + 50));
      const auto before = v;
      rope_normal(v.data(), heads, dim, rope_dim, pos, 100000.0f);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < dim / 2; ++i) {
          const float x0 = before[size_t(h * dim + 2 * i)], x1 = before[size_t(h * dim + 2 * i + 1)];
          double a = 0.0;
          if (2 * i < rope_dim) a = pos * std::pow(100000.0, -2.0 * double(i) / double(rope_dim));
          // The angle is built by repeated f32 multiplication: relative error grows with i.
          const double tol = 1e-5 + 1e-6 * double(pos);
          EXPECT_NEAR(v[size_t(h * dim + 2 * i)], x0 * std::cos(a) - x1 * std::sin(a), tol) << pos << " " << i;
          EXPECT_NEAR(v[size_t(h * dim + 2 * i + 1)], x0 * std::sin(a) + x1 * std::cos(a), tol) << pos << " " << i;
        }
    }
}

TEST(Mirror, AttentionMatchesTheSoftmaxFormulaWithinF16Rounding) {
  const int64_t dim = 64;
  for (int64_t n_pos : {1, 5, 8, 9, 300}) {
    auto keys = random_vector(size_t(n_pos * dim), uint32_t(n_pos)), values = random_vector(size_t(n_pos * dim), 99);
    for (auto& v : keys) v = round_to_f16(v);
    for (auto& v : values) v = round_to_f16(v);
    std::vector<float> keys_t(keys.size());
    for (int64_t p = 0; p < n_pos; ++p)
      for (int64_t d = 0; d < dim; ++d) keys_t[size_t(d * n_pos + p)] = keys[size_t(p * dim + d)];
    const auto q = random_vector(size_t(dim), 5, 2.0f);
    const float scale = 0.125f;
    std::vector<double> s(static_cast<size_t>(n_pos));
    double top = -1e300, sum = 0.0;
    for (int64_t p = 0; p < n_pos; ++p) {
      for (int64_t d = 0; d < dim; ++d) s[size_t(p)] += double(q[size_t(d)]) * keys[size_t(p * dim + d)];
      s[size_t(p)] *= scale;
      top = std::max(top, s[size_t(p)]);
    }
    for (auto& v : s) sum += (v = std::exp(v - top));
    for (DotOrder order : {DotOrder::Tiled, DotOrder::Vector}) {
      std::vector<float> scratch(static_cast<size_t>(dim + (n_pos + 7) / 8 * 8)), out(static_cast<size_t>(dim));
      attend_head(q.data(), keys_t.data(), values.data(), n_pos, dim, scale, order, scratch.data(), out.data());
      for (int64_t d = 0; d < dim; ++d) {
        double want = 0.0;
        for (int64_t p = 0; p < n_pos; ++p) want += s[size_t(p)] / sum * values[size_t(p * dim + d)];
        EXPECT_NEAR(out[size_t(d)], want, 5e-3) << n_pos << " " << d;
      }
    }
  }
}

}  // namespace
}  // namespace ridge::mirror
