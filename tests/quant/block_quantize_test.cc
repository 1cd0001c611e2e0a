// The GGUF block quantizers: bounded round-trip error on awkward rows for every type, importance
// weights lowering the error they weight, bad sizes rejected, and golden checksums of the bytes
// for a fixed input. The goldens were produced by llama.cpp's own ggml-quants.c (quantize_row_*_ref,
// and quantize_* with an imatrix) on the same input, so they pin byte equality with llama-quantize.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/fp4.h"
#include "quant/block_quantize.h"

namespace ridge::quant {
namespace {

const DType kAllTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                           DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                           DType::IQ4_NL, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0};

std::string name_of(DType t) { return std::string(dtype_name(t)); }

bool is_k_type(DType t) { return dtype_info(t).block_size == 256; }

std::vector<uint8_t> quantize(DType t, const std::vector<float>& x, int64_t n_per_row, const float* importance) {
  const int64_t rows = int64_t(x.size()) / n_per_row;
  std::vector<uint8_t> out(size_t(dtype_row_bytes(t, n_per_row) * rows));
  quantize_rows(t, x.data(), out.data(), rows, n_per_row, importance);
  return out;
}

std::vector<float> round_trip(DType t, const std::vector<float>& x, const float* importance = nullptr) {
  const auto bytes = quantize(t, x, int64_t(x.size()), importance);
  std::vector<float> y(x.size());
  ref::dequantize_row(t, bytes.data(), y.data(), int64_t(y.size()));
  return y;
}

// The largest error a type may make, as a fraction of the largest magnitude in the block (the
// super-block for K types) -- loose enough for the weighted searches, which trade a little max
// error for less weighted error -- and the RMS error on normal rows relative to their RMS.
struct Bounds {
  DType type;
  double max_relative, rms_relative;
};
const Bounds kBounds[] = {{DType::F32, 0.0, 0.0},     {DType::F16, 1e-3, 1e-3},   {DType::BF16, 8e-3, 5e-3},
                          {DType::Q8_0, 0.01, 0.01},  {DType::Q4_0, 0.35, 0.12},  {DType::Q4_1, 0.35, 0.11},
                          {DType::Q5_0, 0.3, 0.07},   {DType::Q5_1, 0.35, 0.06},  {DType::Q2_K, 1.0, 0.4},
                          {DType::Q3_K, 0.6, 0.2},    {DType::Q4_K, 0.7, 0.1},    {DType::Q5_K, 0.35, 0.05},
                          {DType::Q6_K, 0.1, 0.025},  {DType::IQ4_NL, 0.3, 0.1},  {DType::IQ4_XS, 0.3, 0.1},
                          // Ternary: d is the block's largest magnitude, so a value is off by at
                          // most d / 2; Gaussian rows are far from ternary, hence the large RMS.
                          {DType::TQ1_0, 0.51, 0.95}, {DType::TQ2_0, 0.51, 0.95}};

// Scales stored as f16 cannot go below its subnormals; values far under that decode to zero.
constexpr float kAbsoluteFloor = 1e-6f;

enum class Pattern { Zeros, Constant, NegativeConstant, Normal, Outlier, Tiny, NegativeOnly };
const Pattern kPatterns[] = {Pattern::Zeros,  Pattern::Constant, Pattern::NegativeConstant, Pattern::Normal,
                             Pattern::Outlier, Pattern::Tiny,     Pattern::NegativeOnly};

std::vector<float> make_row(Pattern p, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    const float g = normal(rng);
    switch (p) {
      case Pattern::Zeros: v = 0.0f; break;
      case Pattern::Constant: v = 0.7f; break;
      case Pattern::NegativeConstant: v = -0.3f; break;
      case Pattern::Normal: case Pattern::Outlier: v = g; break;
      case Pattern::Tiny: v = g * 1e-30f; break;
      case Pattern::NegativeOnly: v = -std::fabs(g); break;
    }
  }
  if (p == Pattern::Outlier) x[size_t(n / 3)] = 1000.0f;
  return x;
}

std::vector<float> importance_row(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n));
  for (float& v : w) v = std::exp(2.0f * normal(rng));  // spans orders of magnitude, like real imatrix rows
  return w;
}

std::vector<int64_t> row_lengths(DType t) {
  if (is_k_type(t)) return {256, 512, 4096};
  return {32, 96, 256, 512, 4096};
}

TEST(BlockQuantize, RoundTripErrorIsBoundedOnAwkwardRows) {
  for (const Bounds& b : kBounds) {
    const int64_t chunk = is_k_type(b.type) ? 256 : 32;
    for (int64_t n : row_lengths(b.type)) {
      for (Pattern p : kPatterns) {
        const auto x = make_row(p, n, uint32_t(n) * 7 + uint32_t(p));
        const auto w = importance_row(n, uint32_t(n) + 99);
        for (const float* importance : {static_cast<const float*>(nullptr), w.data()}) {
          const auto y = round_trip(b.type, x, importance);
          const std::string where =
              name_of(b.type) + " n=" + std::to_string(n) + " pattern=" + std::to_string(int(p)) + (importance ? " imatrix" : "");
          for (int64_t c = 0; c < n; c += chunk) {
            float amax = 0;
            for (int64_t i = c; i < c + chunk; ++i) amax = std::max(amax, std::fabs(x[size_t(i)]));
            for (int64_t i = c; i < c + chunk; ++i) {
              ASSERT_TRUE(std::isfinite(y[size_t(i)])) << where << " i=" << i;
              ASSERT_LE(std::fabs(y[size_t(i)] - x[size_t(i)]), b.max_relative * amax + kAbsoluteFloor) << where << " i=" << i;
            }
          }
          if (p == Pattern::Zeros) {
            EXPECT_EQ(y, x) << where;
          }
          if (p == Pattern::Normal) {
            double err = 0, power = 0;
            for (size_t i = 0; i < x.size(); ++i) {
              err += double(y[i] - x[i]) * (y[i] - x[i]);
              power += double(x[i]) * x[i];
            }
            EXPECT_LE(std::sqrt(err / power), b.rms_relative) << where;
          }
        }
      }
    }
  }
}

// MXFP4 and NVFP4 round trips: within half the largest gap between E2M1 values of the block's
// scale (MXFP4 also clips the top of its binade: at most a quarter of amax), zeros exact, and
// NVFP4 with its per-tensor factor is as accurate on small weights as on large ones (the factor
// moves the E4M3 group scales out of their subnormal range).
TEST(BlockQuantize, Fp4RoundTripsStayWithinTheFormatsSteps) {
  for (const float amplitude : {1e-3f, 0.05f, 3.0f}) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, amplitude);
    std::vector<float> x(4096), y(4096);
    for (float& v : x) v = normal(rng);
    std::fill(x.begin(), x.begin() + 64, 0.0f);
    std::vector<uint8_t> bytes(size_t(dtype_row_bytes(DType::NVFP4, 4096)));
    const float global = ref::nvfp4_global_scale(x.data(), 4096);
    ref::quantize_nvfp4(x.data(), bytes.data(), 4096, global);
    ref::dequantize_row(DType::NVFP4, bytes.data(), y.data(), 4096);
    double err = 0, power = 0;
    for (size_t g = 0; g < 4096; g += 16) {
      float amax = 0;
      for (size_t i = g; i < g + 16; ++i) amax = std::max(amax, std::fabs(x[i]));
      for (size_t i = g; i < g + 16; ++i) {
        const float got = y[i] * global;
        ASSERT_LE(std::fabs(got - x[i]), 0.2f * amax + 1e-12f) << "NVFP4 amplitude " << amplitude << " i=" << i;
        err += double(got - x[i]) * (got - x[i]), power += double(x[i]) * x[i];
      }
    }
    EXPECT_LE(std::sqrt(err / power), 0.12) << "NVFP4 amplitude " << amplitude;
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(y[i], 0.0f);
    // quantize_rows is ggml's NVFP4: the factor 1.
    std::vector<uint8_t> ggml(bytes.size()), one(bytes.size());
    quantize_rows(DType::NVFP4, x.data(), ggml.data(), 1, 4096, nullptr);
    ref::quantize_nvfp4(x.data(), one.data(), 4096, 1.0f);
    EXPECT_EQ(ggml, one);

    const auto m = round_trip(DType::MXFP4, x);
    err = 0;
    for (size_t b = 0; b < 4096; b += 32) {
      float amax = 0;
      for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
      for (size_t i = b; i < b + 32; ++i) {
        ASSERT_LE(std::fabs(m[i] - x[i]), 0.26f * amax) << "MXFP4 amplitude " << amplitude << " i=" << i;
        err += double(m[i] - x[i]) * (m[i] - x[i]);
      }
    }
    EXPECT_LE(std::sqrt(err / power), 0.15) << "MXFP4 amplitude " << amplitude;
  }
}

// The weighted searches minimise importance-weighted error, so on average over rows that error
// must not exceed what the unweighted quantizers give.
TEST(BlockQuantize, ImportanceLowersTheErrorItWeights) {
  constexpr int64_t kRows = 16, kCols = 512;
  const auto w = importance_row(kCols, 5);
  for (DType t : kAllTypes) {
    double plain = 0, weighted = 0;
    for (int64_t r = 0; r < kRows; ++r) {
      const auto x = make_row(Pattern::Normal, kCols, uint32_t(1000 + r));
      const auto y0 = round_trip(t, x), y1 = round_trip(t, x, w.data());
      for (int64_t i = 0; i < kCols; ++i) {
        plain += double(w[size_t(i)]) * (y0[size_t(i)] - x[size_t(i)]) * (y0[size_t(i)] - x[size_t(i)]);
        weighted += double(w[size_t(i)]) * (y1[size_t(i)] - x[size_t(i)]) * (y1[size_t(i)] - x[size_t(i)]);
      }
    }
    EXPECT_LE(weighted, plain) << name_of(t);
    const bool has_weighted_path = t != DType::F32 && t != DType::F16 && t != DType::BF16 && t != DType::Q8_0 &&
                                   t != DType::TQ1_0 && t != DType::TQ2_0;
    if (has_weighted_path) {  // clearly better, not just by rounding luck
      EXPECT_LT(weighted, 0.9 * plain) << name_of(t);
    }
  }
}

// MXFP4 / NVFP4 with importance: the scale search includes ggml's choice, so the weighted error of
// every row is at most ggml's; on rows with uneven importance it is lower on the whole.
TEST(BlockQuantize, Fp4ImportanceNeverLosesToGgmlsScales) {
  for (DType t : {DType::MXFP4, DType::NVFP4}) {
    double weighted_total = 0, plain_total = 0;
    for (uint32_t seed = 0; seed < 16; ++seed) {
      const auto x = make_row(Pattern::Normal, 512, 100 + seed);
      const auto w = importance_row(512, 200 + seed);
      const auto error = [&](const std::vector<uint8_t>& bytes) {
        std::vector<float> y(512);
        ref::dequantize_row(t, bytes.data(), y.data(), 512);
        double e = 0;
        for (size_t i = 0; i < y.size(); ++i) e += double(w[i]) * (y[i] - x[i]) * (y[i] - x[i]);
        return e;
      };
      const double weighted = error(quantize(t, x, 512, w.data())), plain = error(quantize(t, x, 512, nullptr));
      EXPECT_LE(weighted, plain * (1 + 1e-9)) << name_of(t) << " seed " << seed;
      weighted_total += weighted, plain_total += plain;
    }
    EXPECT_LT(weighted_total, 0.97 * plain_total) << name_of(t);
  }
}

TEST(BlockQuantize, TypesWithoutAWeightedPathIgnoreImportance) {
  const auto x = make_row(Pattern::Normal, 256, 3);
  const auto w = importance_row(256, 4);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::TQ1_0, DType::TQ2_0})
    EXPECT_EQ(quantize(t, x, 256, w.data()), quantize(t, x, 256, nullptr)) << name_of(t);
}

TEST(BlockQuantize, ManyRowsEqualRowByRow) {
  std::vector<float> x;
  for (uint32_t r = 0; r < 3; ++r) {
    const auto row = make_row(Pattern::Normal, 512, 40 + r);
    x.insert(x.end(), row.begin(), row.end());
  }
  const auto w = importance_row(512, 41);
  for (DType t : kAllTypes) {
    for (const float* importance : {static_cast<const float*>(nullptr), w.data()}) {
      std::vector<uint8_t> joined;
      for (size_t r = 0; r < 3; ++r) {
        const std::vector<float> row(x.begin() + long(r * 512), x.begin() + long((r + 1) * 512));
        const auto bytes = quantize(t, row, 512, importance);
        joined.insert(joined.end(), bytes.begin(), bytes.end());
      }
      EXPECT_EQ(quantize(t, x, 512, importance), joined) << name_of(t);
    }
  }
}

TEST(BlockQuantize, RejectsBadSizesAndTypesWithoutAQuantizer) {
  std::vector<float> x(4096);
  std::vector<uint8_t> out(8192);
  EXPECT_THROW(quantize_rows(DType::Q4_0, x.data(), out.data(), 1, 48, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::Q4_K, x.data(), out.data(), 1, 96, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::IQ4_NL, x.data(), out.data(), 1, 48, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::IQ4_XS, x.data(), out.data(), 1, 96, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::TQ1_0, x.data(), out.data(), 1, 160, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::Q6_K, x.data(), out.data(), 2, 300, x.data()), Error);
  EXPECT_THROW(quantize_rows(DType::Q8_0, x.data(), out.data(), -1, 32, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::Q8_K, x.data(), out.data(), 1, 256, nullptr), Error);
  EXPECT_THROW(quantize_rows(DType::I32, x.data(), out.data(), 1, 256, nullptr), Error);
  for (DType t : kAllTypes) EXPECT_TRUE(can_quantize(t)) << name_of(t);
  EXPECT_FALSE(can_quantize(DType::Q8_K));
  EXPECT_FALSE(can_quantize(DType::Q8_1));
}

// ---- Golden checksums: 4 rows x 512 from a 64-bit LCG, with outliers, a negative-only block
// and a zero block, and an importance vector with some zero entries. The expected values are
// the FNV-1a hashes of ggml's output bytes for exactly this input.

constexpr int64_t kGoldenRows = 4, kGoldenCols = 512;

struct Lcg {
  uint64_t state;
  float uniform() {  // [0, 1) from the top 24 bits: exact in f32
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return float(state >> 40) / 16777216.0f;
  }
};

void golden_input(std::vector<float>& x, std::vector<float>& w) {
  const float scale[kGoldenRows] = {0.02f, 1.0f, 0.5f, 3.0f};
  x.assign(size_t(kGoldenRows * kGoldenCols), 0.0f);
  w.assign(size_t(kGoldenCols), 0.0f);
  Lcg lcg{12345};
  for (int64_t r = 0; r < kGoldenRows; ++r)
    for (int64_t j = 0; j < kGoldenCols; ++j) {
      const float u1 = lcg.uniform(), u2 = lcg.uniform();
      x[size_t(r * kGoldenCols + j)] = (u1 + u2 - 1.0f) * scale[r];
    }
  x[0 * kGoldenCols + 100] = 0.9f;
  x[1 * kGoldenCols + 7] = -25.0f;
  x[2 * kGoldenCols + 300] = 12.0f;
  x[2 * kGoldenCols + 301] = -11.0f;
  for (int64_t j = 256; j < 288; ++j) x[size_t(2 * kGoldenCols + j)] = -std::fabs(x[size_t(2 * kGoldenCols + j)]);
  for (int64_t j = 64; j < 96; ++j) x[size_t(3 * kGoldenCols + j)] = 0.0f;
  x[3 * kGoldenCols + 500] = 40.0f;
  for (int64_t j = 0; j < kGoldenCols; ++j)
    w[size_t(j)] = j % 61 == 0 ? 0.0f : 0.05f + float((j * 7919) % 997) / 97.0f;
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

TEST(BlockQuantize, BytesMatchGgmlGoldens) {
  const struct {
    DType type;
    uint64_t plain, imatrix;
  } goldens[] = {
      {DType::F32, 0x8127d2fe9264c3f1ull, 0x8127d2fe9264c3f1ull},
      {DType::F16, 0x868faaed44896b76ull, 0x868faaed44896b76ull},
      {DType::BF16, 0xfe4f30c2b2ca6dfaull, 0xfe4f30c2b2ca6dfaull},
      {DType::Q8_0, 0xc2f0ff9bb6d1fae5ull, 0xc2f0ff9bb6d1fae5ull},
      {DType::Q4_0, 0x48f0b83770b657cbull, 0xb7f42414ae6df6a1ull},
      {DType::Q4_1, 0x42b9e174cf30d9fbull, 0xd4e1c720596c66d1ull},
      {DType::Q5_0, 0x106fe4b4fbb9b108ull, 0xc1743c986418bc98ull},
      {DType::Q5_1, 0x7a22f0ea23208006ull, 0xf9430b029b053bbeull},
      {DType::Q2_K, 0x8501f4bf77817222ull, 0x99cdd7ed6f42db46ull},
      {DType::Q3_K, 0x964a2268e2ccd27cull, 0x4ba9f81b086e7c63ull},
      {DType::Q4_K, 0x34cefa3a40a77d4aull, 0xe5ac027a9e68e541ull},
      {DType::Q5_K, 0x66a202ab2fd851feull, 0x0040dcaa6e7c6257ull},
      {DType::Q6_K, 0xdf0ff18f33fd0c1full, 0x403040c99ffe3ef9ull},
      {DType::IQ4_NL, 0x77947f5b0678a513ull, 0xf5381b3be24d48fbull},
      {DType::IQ4_XS, 0xbdea234f99e4d68eull, 0xda9464f35727060aull},
      {DType::TQ1_0, 0xd2396282f670b07cull, 0xd2396282f670b07cull},
      {DType::TQ2_0, 0x822df687f54d74b5ull, 0x822df687f54d74b5ull},
  };
  std::vector<float> x, w;
  golden_input(x, w);
  for (const auto& g : goldens) {
    EXPECT_EQ(fnv1a(quantize(g.type, x, kGoldenCols, nullptr)), g.plain) << name_of(g.type);
    EXPECT_EQ(fnv1a(quantize(g.type, x, kGoldenCols, w.data())), g.imatrix) << name_of(g.type) << " with importance";
  }
}

}  // namespace
}  // namespace ridge::quant
