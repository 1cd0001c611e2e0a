#include "core/dtype.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fp16.h"

namespace ridge {

TEST(DType, RowBytesOfBlockTypes) {
  EXPECT_EQ(dtype_row_bytes(DType::Q4_1, 64), 40);
  EXPECT_EQ(dtype_row_bytes(DType::Q6_K, 256), 210);
  EXPECT_EQ(dtype_row_bytes(DType::F16, 3), 6);
  EXPECT_THROW(dtype_row_bytes(DType::Q4_0, 33), Error);
}

TEST(DType, UnknownIdIsRejected) {
  EXPECT_FALSE(dtype_info(4).has_value());  // removed Q4_2
  EXPECT_FALSE(dtype_info(999).has_value());
  // ridge's own types sit from kFirstInternalType up, where no GGUF type is (the GGUF reader refuses them).
  EXPECT_GE(uint32_t(DType::F8_E4M3), kFirstInternalType);
  EXPECT_TRUE(dtype_info(uint32_t(DType::F8_E4M3)).has_value());
  EXPECT_EQ(dtype_from_name("q4_k"), DType::Q4_K);
  EXPECT_FALSE(dtype_from_name("q4_9").has_value());
}

TEST(Fp16, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(uint16_t(h));
    if (f != f) continue;  // nan payloads need not round-trip
    EXPECT_EQ(f32_to_f16(f), h) << h;
  }
}

TEST(Fp16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);  // halfway: ties to even (1.0)
  EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
  EXPECT_EQ(f32_to_f16(70000.0f), 0x7c00);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(bf16_to_f32(0x4049), 3.140625f);
}

}  // namespace ridge
