#pragma once
// Per-family block decoders behind ref::dequantize_row (internal to kernels/ref).
// Each takes `n_blocks` whole blocks of its type and writes block_size floats per block.
#include <cstdint>
#include <cstring>

#include "core/fp16.h"

// The gguf package computes every product and sum as a separate f32 rounding; a fused
// multiply-add would differ in the last bit. GCC in ISO mode never contracts; clang must be told.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::ref {

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline float load_f16(const uint8_t* p) { return f16_to_f32(load_u16(p)); }

inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// 32-element blocks (dequant_legacy.cc).
void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n_blocks);

// 256-element "K" super-blocks (dequant_k.cc).
void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q8_k(const uint8_t* src, float* dst, int64_t n_blocks);

// 4-bit float blocks (dequant_fp4.cc; layouts in fp4.h).
void dequantize_mxfp4(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_nvfp4(const uint8_t* src, float* dst, int64_t n_blocks);

// Codebook quants (dequant_iq.cc; grids in iq_grids.h).
void dequantize_iq2_xxs(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq2_xs(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq2_s(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq3_xxs(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq3_s(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq1_s(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq1_m(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq4_nl(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_iq4_xs(const uint8_t* src, float* dst, int64_t n_blocks);

// Ternary blocks (dequant_ternary.cc).
void dequantize_tq1_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_tq2_0(const uint8_t* src, float* dst, int64_t n_blocks);

}  // namespace ridge::ref
