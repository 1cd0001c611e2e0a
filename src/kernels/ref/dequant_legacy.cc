// The original ggml block types: 32 elements, one f16 scale (and for the _1 types an f16 min).
// Quants are stored as nibbles: low nibbles hold elements 0..15, high nibbles 16..31.
// The 5-bit types keep each element's fifth bit in a 32-bit mask qh (bit j for element j).
#include "kernels/ref/dequant_blocks.h"

namespace ridge::ref {

// Q4_0 (18 bytes): d, qs[16]. x = d * (q - 8).
void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = load_f16(src);
    const uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * float((qs[j] & 0x0f) - 8);
      dst[j + 16] = d * float((qs[j] >> 4) - 8);
    }
  }
}

// Q4_1 (20 bytes): d, m, qs[16]. x = d * q + m.
void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const float d = load_f16(src);
    const float m = load_f16(src + 2);
    const uint8_t* qs = src + 4;
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * float(qs[j] & 0x0f) + m;
      dst[j + 16] = d * float(qs[j] >> 4) + m;
    }
  }
}

// Q5_0 (22 bytes): d, qh (u32), qs[16]. x = d * (q - 16).
void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const float d = load_f16(src);
    const uint32_t qh = load_u32(src + 2);
    const uint8_t* qs = src + 6;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
      const int hi = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      dst[j] = d * float(lo - 16);
      dst[j + 16] = d * float(hi - 16);
    }
  }
}

// Q5_1 (24 bytes): d, m, qh (u32), qs[16]. x = d * q + m.
void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const float d = load_f16(src);
    const float m = load_f16(src + 2);
    const uint32_t qh = load_u32(src + 4);
    const uint8_t* qs = src + 8;
    for (int j = 0; j < 16; ++j) {
      const int lo = (qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
      const int hi = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      dst[j] = d * float(lo) + m;
      dst[j + 16] = d * float(hi) + m;
    }
  }
}

// Q8_0 (34 bytes): d, qs[32] as int8. x = d * q.
void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const float d = load_f16(src);
    for (int j = 0; j < 32; ++j) dst[j] = d * float(static_cast<int8_t>(src[2 + j]));
  }
}

}  // namespace ridge::ref
