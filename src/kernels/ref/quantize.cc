#include "kernels/ref/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/ref/fp4.h"

// Match ggml's separate roundings: no fused multiply-add (GCC in ISO mode never contracts).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::ref {
namespace {

constexpr int kBlock = 32;  // elements per block of the simple types

void store_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// The signed value of largest magnitude (the first one on ties), as ggml's Q4_0/Q5_0 use it.
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kBlock; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// Nibbles: element j in the low half of byte j, element j + 16 in the high half.
void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < kBlock / 2; ++j) qs[j] = uint8_t((q[j] & 0x0f) | (q[j + kBlock / 2] & 0x0f) << 4);
}

// The fifth bit of each element, bit j for element j.
void pack_fifth_bits(const uint8_t* q, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kBlock; ++j) qh |= uint32_t((q[j] >> 4) & 1) << j;
  std::memcpy(qh_bytes, &qh, 4);
}

// Q4_0 / Q5_0: x ≈ d * (q - offset) with d = max / -offset, q in [0, 2 * offset).
void quantize_symmetric(const float* x, uint8_t* q, float& d, int offset) {
  const float max = signed_absmax(x);
  d = max / float(-offset);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const float bias = float(offset) + 0.5f;
  for (int j = 0; j < kBlock; ++j) q[j] = uint8_t(std::min(2 * offset - 1, int(int8_t(x[j] * id + bias))));
}

// Q4_1 / Q5_1: x ≈ d * q + min with d = (max - min) / levels.
void quantize_affine(const float* x, uint8_t* q, float& d, float& min, int levels) {
  min = x[0];
  float max = x[0];
  for (int j = 1; j < kBlock; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
  d = (max - min) / float(levels);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kBlock; ++j) q[j] = uint8_t(std::min(levels, int(int8_t((x[j] - min) * id + 0.5f))));
}

void quantize_q4_0(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += kBlock, out += 18) {
    uint8_t q[kBlock];
    float d;
    quantize_symmetric(x, q, d, 8);
    store_f16(out, d);
    pack_nibbles(q, out + 2);
  }
}

void quantize_q5_0(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += kBlock, out += 22) {
    uint8_t q[kBlock];
    float d;
    quantize_symmetric(x, q, d, 16);
    store_f16(out, d);
    pack_fifth_bits(q, out + 2);
    pack_nibbles(q, out + 6);
  }
}

void quantize_q4_1(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += kBlock, out += 20) {
    uint8_t q[kBlock];
    float d, min;
    quantize_affine(x, q, d, min, 15);
    store_f16(out, d);
    store_f16(out + 2, min);
    pack_nibbles(q, out + 4);
  }
}

void quantize_q5_1(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += kBlock, out += 24) {
    uint8_t q[kBlock];
    float d, min;
    quantize_affine(x, q, d, min, 31);
    store_f16(out, d);
    store_f16(out + 2, min);
    pack_fifth_bits(q, out + 4);
    pack_nibbles(q, out + 8);
  }
}

// Q8_0: x ≈ d * q, d = absmax / 127, q = round(x / d) half away from zero.
void quantize_q8_0(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += kBlock, out += 34) {
    float amax = 0.0f;
    for (int j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(out, d);
    for (int j = 0; j < kBlock; ++j) out[2 + j] = uint8_t(int8_t(std::round(x[j] * id)));
  }
}

}  // namespace

bool can_quantize(DType type) {
  switch (type) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q8_0:
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1:
    case DType::MXFP4: case DType::NVFP4: case DType::F8_E4M3:
      return true;
    default:
      return false;
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  const int64_t block = dtype_info(type).block_size;
  if (n < 0 || n % block != 0) fail("quantize {}: {} elements is not a multiple of the block size {}", dtype_name(type), n, block);
  auto* out = static_cast<uint8_t*>(dst);
  const int64_t n_blocks = n / block;
  switch (type) {
    case DType::F32:
      std::memcpy(out, src, size_t(n) * 4);
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) store_f16(out + 2 * i, src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::Q4_0: return quantize_q4_0(src, out, n_blocks);
    case DType::Q4_1: return quantize_q4_1(src, out, n_blocks);
    case DType::Q5_0: return quantize_q5_0(src, out, n_blocks);
    case DType::Q5_1: return quantize_q5_1(src, out, n_blocks);
    case DType::Q8_0: return quantize_q8_0(src, out, n_blocks);
    case DType::MXFP4: return quantize_mxfp4(src, out, n_blocks);
    case DType::F8_E4M3:  // scale 1: the checkpoint's scales live beside the bytes
      for (int64_t i = 0; i < n; ++i) out[i] = f32_to_fp8_e4m3(src[i]);
      return;
    case DType::NVFP4: return quantize_nvfp4(src, out, n, 1.0f);  // ggml's: no per-tensor factor
    default:
      fail("ridge has no quantizer for {}", dtype_name(type));
  }
}

}  // namespace ridge::ref
