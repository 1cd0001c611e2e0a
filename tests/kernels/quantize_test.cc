// Reference quantizers: exact round trips on values each format can hold, bounded error on
// random rows, zero blocks, and bad sizes. (Byte equality with the gguf package is checked in
// tests/conformance/test_quantize.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/quantize.h"

namespace ridge::ref {
namespace {

std::vector<float> round_trip(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(size_t(dtype_row_bytes(type, int64_t(x.size()))));
  quantize_row(type, x.data(), bytes.data(), int64_t(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(type, bytes.data(), y.data(), int64_t(y.size()));
  return y;
}

// A block of integers the format stores exactly with scale 1 (and min 0 or the smallest value).
std::vector<float> exact_block(DType type) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) {
    switch (type) {
      case DType::Q4_0: x[j] = float(j % 16 - 8); break;   // absmax -8 gives d = 1
      case DType::Q4_1: x[j] = float(j % 16); break;       // min 0, d = 15 / 15
      case DType::Q5_0: x[j] = float(j - 16); break;       // absmax -16 gives d = 1
      case DType::Q5_1: x[j] = float(j); break;            // min 0, d = 31 / 31
      default: x[j] = float(j * 8 - 121); break;           // Q8_0: absmax 127 gives d = 1
    }
  }
  return x;
}

TEST(Quantize, BlockTypesRoundTripValuesTheyHoldExactly) {
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    const auto x = exact_block(type);
    EXPECT_EQ(round_trip(type, x), x) << dtype_name(type);
  }
}

TEST(Quantize, RandomRowsStayWithinEachFormatsStep) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = normal(rng);
  double power = 0;
  for (float v : x) power += double(v) * v;
  const struct {
    DType type;
    double max_relative_rms;
  } cases[] = {{DType::F32, 0.0}, {DType::F16, 1e-3}, {DType::BF16, 5e-3}, {DType::Q8_0, 0.01},
               {DType::Q5_0, 0.05}, {DType::Q5_1, 0.05}, {DType::Q4_0, 0.1}, {DType::Q4_1, 0.1}};
  for (const auto& c : cases) {
    const auto y = round_trip(c.type, x);
    double error = 0;
    for (size_t i = 0; i < x.size(); ++i) error += double(y[i] - x[i]) * (y[i] - x[i]);
    EXPECT_LE(std::sqrt(error / power), c.max_relative_rms) << dtype_name(c.type);
  }
}

TEST(Quantize, ZeroBlocksDecodeToZero) {
  const std::vector<float> zeros(64, 0.0f);
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0})
    EXPECT_EQ(round_trip(type, zeros), zeros) << dtype_name(type);
}

TEST(Quantize, RejectsPartialBlocksAndTypesWithoutAQuantizer) {
  std::vector<float> x(48);
  std::vector<uint8_t> out(256);
  EXPECT_THROW(quantize_row(DType::Q4_0, x.data(), out.data(), 48), Error);
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), out.data(), 256), Error);
  EXPECT_FALSE(can_quantize(DType::Q6_K));
  EXPECT_TRUE(can_quantize(DType::Q5_1));
}

}  // namespace
}  // namespace ridge::ref
