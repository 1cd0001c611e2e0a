#include "kernels/ref/dequant.h"

#include <cstring>

#include "core/error.h"
#include "core/fp16.h"

namespace ridge::ref {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

float load_f16(const uint8_t* p) { return f16_to_f32(load_u16(p)); }

// Q4_0: f16 scale d, 16 bytes of nibbles; low nibbles are elements 0..15, high nibbles 16..31. x = d * (q - 8).
void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = load_f16(src);
    for (int j = 0; j < 16; ++j) {
      dst[j] = float((src[2 + j] & 0x0f) - 8) * d;
      dst[j + 16] = float((src[2 + j] >> 4) - 8) * d;
    }
  }
}

// Q4_1: f16 scale d, f16 min m, 16 bytes of nibbles. x = d * q + m.
void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const float d = load_f16(src);
    const float m = load_f16(src + 2);
    for (int j = 0; j < 16; ++j) {
      dst[j] = float(src[4 + j] & 0x0f) * d + m;
      dst[j + 16] = float(src[4 + j] >> 4) * d + m;
    }
  }
}

// Q8_0: f16 scale d, 32 int8. x = d * q.
void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const float d = load_f16(src);
    for (int j = 0; j < 32; ++j) dst[j] = float(static_cast<int8_t>(src[2 + j])) * d;
  }
}

}  // namespace

bool can_dequantize(DType type) {
  switch (type) {
    case DType::F32: case DType::F16: case DType::BF16:
    case DType::Q4_0: case DType::Q4_1: case DType::Q8_0:
      return true;
    default:
      return false;
  }
}

void dequantize_row(DType type, const void* src_void, float* dst, int64_t n) {
  const auto* src = static_cast<const uint8_t*>(src_void);
  const int64_t n_blocks = n / dtype_info(type).block_size;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
    case DType::F16: for (int64_t i = 0; i < n; ++i) dst[i] = load_f16(src + 2 * i); return;
    case DType::BF16: for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i)); return;
    case DType::Q4_0: dequantize_q4_0(src, dst, n_blocks); return;
    case DType::Q4_1: dequantize_q4_1(src, dst, n_blocks); return;
    case DType::Q8_0: dequantize_q8_0(src, dst, n_blocks); return;
    default: fail("no dequantizer for tensor type {}", dtype_name(type));
  }
}

}  // namespace ridge::ref
