// Reference dequantizers on hand-built blocks, values worked out from the block layouts.
// (The bit-exact comparison with the gguf package over random blocks and the default model is
// tests/conformance/test_dequant.py; these tests keep the layouts checked without Python.)
#include "kernels/ref/dequant.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"

namespace ridge::ref {
namespace {

void put_f16(std::vector<uint8_t>& b, size_t at, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(b.data() + at, &h, 2);
}

std::vector<float> decode(DType type, const std::vector<uint8_t>& block) {
  const auto& info = dtype_info(type);
  EXPECT_EQ(int64_t(block.size()), info.block_bytes);
  std::vector<float> out(size_t(info.block_size));
  dequantize_row(type, block.data(), out.data(), info.block_size);
  return out;
}

TEST(DequantRef, Q4_0AndQ4_1) {
  std::vector<uint8_t> q4_0(18, 0);
  put_f16(q4_0, 0, 2.0f);
  q4_0[2] = 0x1f;
  const auto a = decode(DType::Q4_0, q4_0);
  EXPECT_EQ(a[0], 14.0f);    // 2 * (15 - 8)
  EXPECT_EQ(a[16], -14.0f);  // 2 * (1 - 8)
  EXPECT_EQ(a[1], -16.0f);

  std::vector<uint8_t> q4_1(20, 0);
  put_f16(q4_1, 0, 0.5f);
  put_f16(q4_1, 2, -1.0f);
  q4_1[4 + 3] = 0xa5;
  const auto b = decode(DType::Q4_1, q4_1);
  EXPECT_EQ(b[3], 1.5f);   // 0.5 * 5 - 1
  EXPECT_EQ(b[19], 4.0f);  // 0.5 * 10 - 1
}

TEST(DequantRef, Q5_0AndQ5_1TakeTheFifthBitFromQh) {
  std::vector<uint8_t> q5_0(22, 0);
  put_f16(q5_0, 0, 1.0f);
  const uint32_t qh = (1u << 0) | (1u << 17);
  std::memcpy(q5_0.data() + 2, &qh, 4);
  const auto a = decode(DType::Q5_0, q5_0);
  EXPECT_EQ(a[0], 0.0f);  // (0 | 16) - 16
  EXPECT_EQ(a[1], -16.0f);
  EXPECT_EQ(a[16], -16.0f);
  EXPECT_EQ(a[17], 0.0f);

  std::vector<uint8_t> q5_1(24, 0);
  put_f16(q5_1, 0, 1.0f);
  put_f16(q5_1, 2, 0.5f);
  const uint32_t top = 1u << 31;
  std::memcpy(q5_1.data() + 4, &top, 4);
  q5_1[8 + 15] = 0xf0;
  const auto b = decode(DType::Q5_1, q5_1);
  EXPECT_EQ(b[31], 31.5f);  // (15 | 16) + 0.5
  EXPECT_EQ(b[15], 0.5f);
}

TEST(DequantRef, Q8_0AndQ8_K) {
  std::vector<uint8_t> q8_0(34, 0);
  put_f16(q8_0, 0, 0.25f);
  q8_0[2 + 5] = 0x80;
  EXPECT_EQ(decode(DType::Q8_0, q8_0)[5], -32.0f);

  std::vector<uint8_t> q8_k(292, 0);
  const float d = 0.5f;
  std::memcpy(q8_k.data(), &d, 4);  // Q8_K's scale is an f32
  q8_k[4 + 255] = 100;
  EXPECT_EQ(decode(DType::Q8_K, q8_k)[255], 50.0f);
}

TEST(DequantRef, Q2_K) {
  std::vector<uint8_t> b(84, 0);
  b[0] = 0x21;  // sub-block 0: scale 1, min 2
  b[2] = 0x03;  // sub-block 2: scale 3, min 0
  b[16 + 0] = 0b11100100;
  put_f16(b, 80, 1.0f);
  put_f16(b, 82, 0.5f);
  const auto y = decode(DType::Q2_K, b);
  EXPECT_EQ(y[0], -1.0f);  // 1 * 0 - 0.5 * 2
  EXPECT_EQ(y[32], 3.0f);  // second bit pair of qs[0] is 1; 3 * 1 - 0
}

TEST(DequantRef, Q3_K) {
  std::vector<uint8_t> b(110, 0);
  put_f16(b, 108, 1.0f);
  b[0] = 0x01;  // hmask: high bit set for element 0 only
  const auto y = decode(DType::Q3_K, b);
  EXPECT_EQ(y[1], 128.0f);  // scale 0 - 32 = -32, quant 0 - 4 = -4
  EXPECT_EQ(y[0], 0.0f);    // quant 0 - 0
  b[96 + 8] = 0x02;         // top bits of scale 0 become 2: scale 32 - 32 = 0
  EXPECT_EQ(decode(DType::Q3_K, b)[1], 0.0f);
}

TEST(DequantRef, Q4_KAndQ5_K) {
  std::vector<uint8_t> b(144, 0);
  put_f16(b, 0, 1.0f);
  put_f16(b, 2, 2.0f);
  b[4 + 0] = 0xc3;  // sub-block 0 scale 3; top bits feed sub-block 4's scale
  b[4 + 4] = 0x01;  // sub-block 0 min 1
  b[4 + 8] = 0x21;  // sub-block 4: scale low 1, min low 2
  b[16 + 0] = 0x52;
  b[16 + 64] = 0x01;
  const auto y = decode(DType::Q4_K, b);
  EXPECT_EQ(y[0], 4.0f);     // 3 * 2 - 2 * 1
  EXPECT_EQ(y[32], 0.0f);    // sub-block 1 has scale 0, min 0
  EXPECT_EQ(y[128], 45.0f);  // scale 1 | 3 << 4 = 49, min 2: 49 * 1 - 2 * 2

  std::vector<uint8_t> c(176, 0);
  std::memcpy(c.data(), b.data(), 16);  // same d, dmin, scales
  c[16 + 0] = 0x01;                     // qh: fifth bit of element 0
  c[48 + 0] = 0x52;
  EXPECT_EQ(decode(DType::Q5_K, c)[0], 52.0f);  // 3 * (2 | 16) - 2
}

TEST(DequantRef, Q6_K) {
  std::vector<uint8_t> b(210, 0);
  b[0] = 0x31;    // ql[0]: low nibble 1 (element 0), high nibble 3 (element 64)
  b[128] = 0x02;  // qh[0]: bit pair 0 is 2 (element 0), pair 2 is 0 (element 64)
  b[192 + 0] = 2;
  b[192 + 4] = 0xff;  // scale -1
  put_f16(b, 208, 1.0f);
  const auto y = decode(DType::Q6_K, b);
  EXPECT_EQ(y[0], 2.0f);    // 2 * ((1 | 2 << 4) - 32)
  EXPECT_EQ(y[64], 29.0f);  // -1 * (3 - 32)
}

TEST(DequantRef, PlainTypes) {
  const uint16_t halves[2] = {0x3c00, 0xc000};
  std::vector<float> out(2);
  dequantize_row(DType::F16, halves, out.data(), 2);
  EXPECT_EQ(out, (std::vector<float>{1.0f, -2.0f}));
  const uint16_t bf[2] = {0x3f80, 0x4049};
  dequantize_row(DType::BF16, bf, out.data(), 2);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], bf16_to_f32(0x4049));
}

TEST(DequantRef, RejectsWhatItCannotDecode) {
  std::vector<uint8_t> block(64, 0);
  std::vector<float> out(64);
  EXPECT_THROW(dequantize_row(DType::Q4_0, block.data(), out.data(), 31), Error);
  EXPECT_THROW(dequantize_row(DType::I32, block.data(), out.data(), 4), Error);
  EXPECT_FALSE(can_dequantize(DType::Q8_1));
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                  DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K})
    EXPECT_TRUE(can_dequantize(t)) << dtype_name(t);
}

}  // namespace
}  // namespace ridge::ref
