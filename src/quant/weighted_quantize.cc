// Q4_0, Q4_1, Q5_0, Q5_1 with importance weights (ggml's quantize_row_q*_impl): instead of
// taking the block's extreme value as the scale, each 32-element block searches for the scale
// (and min) with the least importance-weighted squared error. The weight of a value is its
// imatrix entry times sqrt(sigma² + x²), sigma² being the row's mean square, so large values
// and heavily used columns count most. Block layouts are ref::quantize_row's.
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "quant/block_quantize.h"
#include "quant/scale_search.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

constexpr int kBlock = 32;


// Nibbles: element j in the low half of byte j, element j + 16 in the high half.
template <typename Level>
void pack_nibbles(const Level* L, uint8_t* qs) {
  for (int j = 0; j < kBlock / 2; ++j) qs[j] = uint8_t((L[j] & 0x0f) | ((L[j + kBlock / 2] & 0x0f) << 4));
}

// The fifth bit of element j as bit j of a little-endian u32.
template <typename Level>
void pack_fifth_bits(const Level* L, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kBlock; ++j) qh |= uint32_t((L[j] & 0x10) >> 4) << j;
  std::memcpy(qh_bytes, &qh, 4);
}

void encode_block(DType type, const float* x, const float* weight, uint8_t* out) {
  switch (type) {
    case DType::Q4_0: {  // x ≈ d * (L - 8)
      int8_t L[kBlock];
      store_f16(out, fit_symmetric(kBlock, 8, x, L, weight));
      pack_nibbles(L, out + 2);
      return;
    }
    case DType::Q5_0: {  // x ≈ d * (L - 16)
      int8_t L[kBlock];
      store_f16(out, fit_symmetric(kBlock, 16, x, L, weight));
      pack_fifth_bits(L, out + 2);
      pack_nibbles(L, out + 6);
      return;
    }
    case DType::Q4_1:    // x ≈ d * L + m
    case DType::Q5_1: {
      const int nmax = type == DType::Q4_1 ? 15 : 31;
      uint8_t L[kBlock], scratch[kBlock];
      float min;
      store_f16(out, fit_affine(kBlock, nmax, x, weight, L, &min, scratch, -0.9f, 0.05f, 36, false));
      store_f16(out + 2, -min);
      if (type == DType::Q4_1) {
        pack_nibbles(L, out + 4);
      } else {
        pack_fifth_bits(L, out + 4);
        pack_nibbles(L, out + 8);
      }
      return;
    }
    default:
      fail("{} has no importance-weighted quantizer", dtype_name(type));
  }
}

}  // namespace

void quantize_row_weighted(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  float sum_x2 = 0;
  for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
  const float sigma2 = sum_x2 / float(n);
  const int64_t block_bytes = dtype_info(type).block_bytes;
  float weight[kBlock];
  for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock, importance += kBlock, dst += block_bytes) {
    for (int j = 0; j < kBlock; ++j) weight[j] = importance[j] * std::sqrt(sigma2 + x[j] * x[j]);
    encode_block(type, x, weight, dst);
  }
}

}  // namespace ridge::quant
