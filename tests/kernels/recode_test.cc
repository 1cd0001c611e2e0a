// Re-encoding at load (kernels/ref/recode.h): Q5_0 as Q8_0 exactly, Q4_K as Q4_1 within the f16
// rounding of its sub-block scales and offsets, compared through the reference dequantizer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/recode.h"

namespace ridge::ref {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

void put_f16(uint8_t* p, float x) {
  const uint16_t h = f32_to_f16(x);
  std::memcpy(p, &h, 2);
}

TEST(Recode, Q5_0BecomesQ8_0BitForBit) {
  for (int64_t n_blocks : {1, 7, 64}) {
    auto src = random_bytes(size_t(n_blocks * 22), uint32_t(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) put_f16(&src[size_t(b * 22)], 0.001f * float(b + 1) * (b % 2 ? -1.0f : 1.0f));
    std::vector<uint8_t> dst(size_t(n_blocks * 34));
    ASSERT_EQ(recoded_type(DType::Q5_0), DType::Q8_0);
    recode_row(DType::Q5_0, src.data(), n_blocks * 32, dst.data());
    std::vector<float> want(size_t(n_blocks * 32)), got(want.size());
    dequantize_row(DType::Q5_0, src.data(), want.data(), n_blocks * 32);
    dequantize_row(DType::Q8_0, dst.data(), got.data(), n_blocks * 32);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
  }
}

TEST(Recode, Q4_KBecomesQ4_1WithinTheF16RoundingOfItsScales) {
  for (int64_t n_super : {1, 3, 16}) {
    auto src = random_bytes(size_t(n_super * 144), uint32_t(100 + n_super));
    std::mt19937 rng(7);
    for (int64_t b = 0; b < n_super; ++b) {
      // Realistic super-block scales, and one block with tiny ones (subnormal f16 products).
      const float scale = b == 1 ? 3e-7f : std::uniform_real_distribution<float>(1e-4f, 2e-3f)(rng);
      put_f16(&src[size_t(b * 144)], scale);
      put_f16(&src[size_t(b * 144 + 2)], scale * 0.7f);
    }
    std::vector<uint8_t> dst(size_t(n_super * 8 * 20));
    ASSERT_EQ(recoded_type(DType::Q4_K), DType::Q4_1);
    recode_row(DType::Q4_K, src.data(), n_super * 256, dst.data());
    std::vector<float> want(size_t(n_super * 256)), got(want.size());
    dequantize_row(DType::Q4_K, src.data(), want.data(), n_super * 256);
    dequantize_row(DType::Q4_1, dst.data(), got.data(), n_super * 256);
    int64_t exact = 0;
    for (int64_t b = 0; b < n_super * 8; ++b) {
      // This sub-block's step and offset as Q4_K defines them: |error| <= 15 half-ulps of the
      // f16 step plus one of the f16 offset (an f16 ulp is at most 2^-10 of the value, or 2^-24).
      uint16_t d16, m16;
      std::memcpy(&d16, &dst[size_t(b * 20)], 2);
      std::memcpy(&m16, &dst[size_t(b * 20 + 2)], 2);
      const double step = std::fabs(f16_to_f32(d16)), offset = std::fabs(f16_to_f32(m16));
      const double bound = 15 * std::max(step * 0x1p-11, 0x1p-25) + std::max(offset * 0x1p-11, 0x1p-25) + 1e-9;
      for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
        ASSERT_LE(std::fabs(double(got[size_t(i)]) - want[size_t(i)]), bound) << "sub-block " << b << " value " << i;
        exact += got[size_t(i)] == want[size_t(i)];
      }
    }
    EXPECT_GT(exact, 0);
  }
}

TEST(Recode, RefusesPartialBlocksAndOtherTypes) {
  std::vector<uint8_t> src(1024), dst(1024);
  EXPECT_THROW(recode_row(DType::Q4_K, src.data(), 100, dst.data()), Error);
  EXPECT_THROW(recode_row(DType::Q5_0, src.data(), 33, dst.data()), Error);
  EXPECT_THROW(recode_row(DType::Q6_K, src.data(), 256, dst.data()), Error);
  EXPECT_EQ(recoded_type(DType::Q6_K), DType::Q6_K);
  EXPECT_EQ(recoded_type(DType::Q4_0), DType::Q4_0);
}

}  // namespace
}  // namespace ridge::ref
