// The "K" quantizers: each 256-element super-block is split into sub-blocks of 16 or 32, each
// sub-block gets its own scale (and min) from a search, and those are themselves quantized to
// 4, 6 or 8 bits against the super-block's f16 d (and dmin). Without importance weights these
// follow ggml's quantize_row_*_ref; with them, its quantize_row_*_impl. After the scales are
// stored, every value is re-rounded against the scale the decoder will actually see.
// Byte layouts are those ref::dequantize_row reads (kernels/ref/dequant_k.cc).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/k_scales.h"
#include "quant/block_quantize.h"
#include "quant/scale_search.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

constexpr int kQK = 256;


float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

float sum_of_squares(const float* x, int n) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  return s;
}

// The importance-derived weights of one sub-block: the imatrix value scaled by how far the value
// stands out from the super-block's spread.
void importance_weights(const float* x, const float* importance, float sigma2, int n, float* weights) {
  for (int l = 0; l < n; ++l) weights[l] = importance[l] * std::sqrt(sigma2 + x[l] * x[l]);
}

float sum(const float* w, int n) {
  float s = 0;
  for (int l = 0; l < n; ++l) s += w[l];
  return s;
}

// 2-bit levels, four per byte: each 128-element half fills 32 bytes, its 32-element groups in
// bit pairs 0..3 (Q2_K and Q3_K's low bits).
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// ---- Q2_K (84 bytes): scales[16] (low nibble scale, high nibble min), qs[64], d, dmin.

// Rounds each value against the stored sub-block scales: x ≈ d * L - m, L in [0, 3].
void requantize_q2_k(const float* x, const uint8_t* scales, float d_all, float m_all, uint8_t* L) {
  for (int j = 0; j < kQK / 16; ++j) {
    const float d = d_all * float(scales[j] & 0xf);
    if (!d) continue;  // keep the search's levels
    const float m = m_all * float(scales[j] >> 4);
    for (int i = 0; i < 16; ++i) L[16 * j + i] = uint8_t(std::clamp(nearest_int((x[16 * j + i] + m) / d), 0, 3));
  }
}

void quantize_q2_k(const float* x, uint8_t* out) {
  uint8_t L[kQK], scratch[16];
  float weights[16], mins[kQK / 16], scales[kQK / 16];
  float max_scale = 0, max_min = 0;  // scales and mins are never negative here
  for (int j = 0; j < kQK / 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = fit_affine(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], scratch, -0.5f, 0.1f, 15, true);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  uint8_t* sc = out;
  float d = 0, dmin = 0;
  if (max_scale > 0) {
    const float iscale = 15.f / max_scale;
    for (int j = 0; j < kQK / 16; ++j) sc[j] = uint8_t(nearest_int(iscale * scales[j]));
    d = store_f16(out + 80, max_scale / 15.f);
  } else {
    std::memset(sc, 0, kQK / 16);
    d = store_f16(out + 80, 0.f);
  }
  if (max_min > 0) {
    const float iscale = 15.f / max_min;
    for (int j = 0; j < kQK / 16; ++j) sc[j] = uint8_t(sc[j] | (nearest_int(iscale * mins[j]) << 4));
    dmin = store_f16(out + 82, max_min / 15.f);
  } else {
    dmin = store_f16(out + 82, 0.f);
  }
  requantize_q2_k(x, sc, d, dmin, L);
  pack_2bit(L, out + 16);
}

void quantize_q2_k_weighted(const float* x, uint8_t* out, const float* importance) {
  uint8_t L[kQK], scratch[16], Ls[kQK / 16], Lm[kQK / 16];
  float weights[16], mins[kQK / 16], scales[kQK / 16], sw[kQK / 16];
  const float sigma2 = sum_of_squares(x, kQK) / kQK;
  for (int j = 0; j < kQK / 16; ++j) {
    importance_weights(x + 16 * j, importance + 16 * j, sigma2, 16, weights);
    sw[j] = sum(weights, 16);
    scales[j] = fit_affine(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], scratch, -0.9f, 0.05f, 36, false);
  }
  // The sub-block scales and mins are quantized by the same weighted search, weighted by each
  // sub-block's total importance.
  const float d = store_f16(out + 80, fit_positive(kQK / 16, 15, scales, Ls, sw));
  const float dmin = store_f16(out + 82, fit_positive(kQK / 16, 15, mins, Lm, sw));
  uint8_t* sc = out;
  for (int j = 0; j < kQK / 16; ++j) sc[j] = uint8_t(Ls[j] | (Lm[j] << 4));
  requantize_q2_k(x, sc, d, dmin, L);
  pack_2bit(L, out + 16);
}

// ---- Q3_K (110 bytes): hmask[32], qs[64], scales[12] (sixteen 6-bit values, offset 32), d.

// Low nibbles in bytes 0..7 (scales 0..7 low, 8..15 high), top two bits in bytes 8..11.
void pack_q3_scale(uint8_t* sc, int j, int l) {
  if (j < 8)
    sc[j] = uint8_t(l & 0xf);
  else
    sc[j - 8] = uint8_t(sc[j - 8] | ((l & 0xf) << 4));
  l >>= 4;
  sc[j % 4 + 8] = uint8_t(sc[j % 4 + 8] | (l << (2 * (j / 4))));
}

int8_t unpack_q3_scale(const uint8_t* sc, int j) {
  const int8_t low = int8_t(j < 8 ? sc[j] & 0xf : sc[j - 8] >> 4);
  return int8_t((low | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
}

// Rounds against the stored scales (x ≈ d * (L - 4)), then splits each 3-bit level into the
// high-bit mask (bit j/32 of hmask[j % 32]) and two low bits.
void finish_q3_k(const float* x, int8_t* L, uint8_t* out) {
  const uint8_t* sc = out + 96;
  const float d_all = load_f16(out + 108);
  for (int j = 0; j < kQK / 16; ++j) {
    const float d = d_all * float(unpack_q3_scale(sc, j));
    if (!d) continue;
    for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::clamp(nearest_int(x[16 * j + i] / d), -4, 3) + 4);
  }
  uint8_t* hmask = out;
  std::memset(hmask, 0, kQK / 8);
  uint8_t low[kQK];
  for (int j = 0; j < kQK; ++j) {
    int l = L[j];
    if (l > 3) {
      hmask[j % 32] = uint8_t(hmask[j % 32] | (1 << (j / 32)));
      l -= 4;
    }
    low[j] = uint8_t(l);
  }
  pack_2bit(low, out + 32);
}

void quantize_q3_k(const float* x, uint8_t* out) {
  int8_t L[kQK];
  float scales[kQK / 16];
  float max_scale = 0, amax = 0;  // the scale of largest magnitude, with its sign
  for (int j = 0; j < kQK / 16; ++j) {
    scales[j] = fit_symmetric_refined(16, 4, x + 16 * j, L + 16 * j);
    if (std::fabs(scales[j]) > amax) {
      amax = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  uint8_t* sc = out + 96;
  std::memset(sc, 0, 12);
  if (max_scale != 0) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < kQK / 16; ++j) {
      const int8_t l = int8_t(nearest_int(iscale * scales[j]));  // narrowed before clamping, as ggml does
      pack_q3_scale(sc, j, std::clamp<int>(l, -32, 31) + 32);
    }
    store_f16(out + 108, 1 / iscale);
  } else {
    store_f16(out + 108, 0.f);
  }
  finish_q3_k(x, L, out);
}

void quantize_q3_k_weighted(const float* x, uint8_t* out, const float* importance) {
  int8_t L[kQK], Ls[kQK / 16];
  float scales[kQK / 16], weights[16], sw[kQK / 16];
  const float sigma2 = 2 * sum_of_squares(x, kQK) / kQK;
  for (int j = 0; j < kQK / 16; ++j) {
    importance_weights(x + 16 * j, importance + 16 * j, sigma2, 16, weights);
    sw[j] = sum(weights, 16);
    scales[j] = fit_symmetric(16, 4, x + 16 * j, L + 16 * j, weights);
  }
  uint8_t* sc = out + 96;
  std::memset(sc, 0, 12);
  const float d_block = fit_symmetric(kQK / 16, 32, scales, Ls, sw);
  for (int j = 0; j < kQK / 16; ++j) pack_q3_scale(sc, j, Ls[j]);
  store_f16(out + 108, d_block);
  finish_q3_k(x, L, out);
}

// ---- Q4_K (144 bytes) and Q5_K (176 bytes): d, dmin, scales[12] (eight 6-bit scale/min
// pairs, ref::unpack_scale_min_k4's packing), [qh[32] for Q5_K], qs[128].

void pack_scale_min_k4(uint8_t* sc, int j, uint8_t ls, uint8_t lm) {
  if (j < 4) {
    sc[j] = ls;
    sc[j + 4] = lm;
  } else {
    sc[j + 4] = uint8_t((ls & 0xf) | ((lm & 0xf) << 4));
    sc[j - 4] = uint8_t(sc[j - 4] | ((ls >> 4) << 6));
    sc[j] = uint8_t(sc[j] | ((lm >> 4) << 6));
  }
}

// Rounds against the stored scales and mins: x ≈ d * L - m, L in [0, nmax].
void requantize_k4(const float* x, const uint8_t* out, int nmax, uint8_t* L) {
  const float d_all = load_f16(out);
  const float m_all = load_f16(out + 2);
  for (int j = 0; j < kQK / 32; ++j) {
    uint8_t sc, m;
    ref::unpack_scale_min_k4(out + 4, j, sc, m);
    const float d = d_all * float(sc);
    if (!d) continue;
    const float dm = m_all * float(m);
    for (int i = 0; i < 32; ++i) L[32 * j + i] = uint8_t(std::clamp(nearest_int((x[32 * j + i] + dm) / d), 0, nmax));
  }
}

// Without importance: per-sub-block searches weighted by |x| plus the sub-block's RMS, then the
// scales and mins rounded to 6 bits against their maxima.
void quantize_k4_scales(const float* x, uint8_t* out, int nmax, float rmin, float rdelta, int nstep, uint8_t* L) {
  uint8_t scratch[32];
  float weights[32], mins[kQK / 32], scales[kQK / 32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQK / 32; ++j) {
    const float av_x = std::sqrt(sum_of_squares(x + 32 * j, 32) / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = fit_affine(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], scratch, rmin, rdelta, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK / 32; ++j) {
    const uint8_t ls = uint8_t(nearest_int(inv_scale * scales[j]));
    const uint8_t lm = uint8_t(nearest_int(inv_min * mins[j]));
    pack_scale_min_k4(out + 4, j, std::min<uint8_t>(63, ls), std::min<uint8_t>(63, lm));
  }
  store_f16(out, max_scale / 63.f);
  store_f16(out + 2, max_min / 63.f);
  requantize_k4(x, out, nmax, L);
}

// With importance: every sub-block searched with importance weights, then its scale and min
// quantized by the weighted positive search. Q5_K clamps the 6-bit levels; Q4_K does not need to.
void quantize_k4_scales_weighted(const float* x, uint8_t* out, int nmax, const float* importance, bool clamp_levels,
                                 uint8_t* L) {
  uint8_t scratch[32], Ls[kQK / 32], Lm[kQK / 32];
  float weights[32], sw[kQK / 32], mins[kQK / 32], scales[kQK / 32];
  const float sigma2 = 2 * sum_of_squares(x, kQK) / kQK;
  for (int j = 0; j < kQK / 32; ++j) {
    importance_weights(x + 32 * j, importance + 32 * j, sigma2, 32, weights);
    sw[j] = sum(weights, 32);
    scales[j] = fit_affine(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], scratch, -0.9f, 0.05f, 36, false);
  }
  const float d_block = fit_positive(kQK / 32, 63, scales, Ls, sw);
  const float m_block = fit_positive(kQK / 32, 63, mins, Lm, sw);
  for (int j = 0; j < kQK / 32; ++j) {
    const uint8_t ls = clamp_levels ? std::min<uint8_t>(63, Ls[j]) : Ls[j];
    const uint8_t lm = clamp_levels ? std::min<uint8_t>(63, Lm[j]) : Lm[j];
    pack_scale_min_k4(out + 4, j, ls, lm);
  }
  store_f16(out, d_block);
  store_f16(out + 2, m_block);
  requantize_k4(x, out, nmax, L);
}

// Nibbles: each 64-element chunk fills 32 bytes, its first 32 elements in the low halves.
void pack_q4_k(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK; j += 64, qs += 32)
    for (int l = 0; l < 32; ++l) qs[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
}

// As Q4_K, with the fifth bit of element 32 * sub + l in bit `sub` of qh[l].
void pack_q5_k(const uint8_t* L, uint8_t* qh, uint8_t* qs) {
  std::memset(qh, 0, kQK / 8);
  for (int j = 0, sub = 0; j < kQK; j += 64, sub += 2, qs += 32) {
    for (int l = 0; l < 32; ++l) {
      int l1 = L[j + l], l2 = L[j + l + 32];
      if (l1 > 15) {
        l1 -= 16;
        qh[l] = uint8_t(qh[l] | (1 << sub));
      }
      if (l2 > 15) {
        l2 -= 16;
        qh[l] = uint8_t(qh[l] | (2 << sub));
      }
      qs[l] = uint8_t(l1 | (l2 << 4));
    }
  }
}

void quantize_q4_k(const float* x, uint8_t* out, const float* importance) {
  uint8_t L[kQK];
  if (importance)
    quantize_k4_scales_weighted(x, out, 15, importance, false, L);
  else
    quantize_k4_scales(x, out, 15, -1.f, 0.1f, 20, L);
  pack_q4_k(L, out + 16);
}

void quantize_q5_k(const float* x, uint8_t* out, const float* importance) {
  uint8_t L[kQK];
  if (importance)
    quantize_k4_scales_weighted(x, out, 31, importance, true, L);
  else
    quantize_k4_scales(x, out, 31, -0.5f, 0.1f, 15, L);
  pack_q5_k(L, out + 16, out + 48);
}

// ---- Q6_K (210 bytes): ql[128], qh[64], scales[16] as int8, d. The same algorithm with and
// without importance; the imatrix values are the fit's weights as they are.

void quantize_q6_k(const float* x, uint8_t* out, const float* importance) {
  int8_t L[kQK];
  float scales[kQK / 16];
  float max_scale = 0, max_abs_scale = 0;
  for (int j = 0; j < kQK / 16; ++j) {
    scales[j] = fit_symmetric(16, 32, x + 16 * j, L + 16 * j, importance ? importance + 16 * j : nullptr);
    if (std::fabs(scales[j]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {  // all zero: d = 0 and every level 0
    std::memset(out, 0, 210);
    return;
  }
  const float iscale = -128.f / max_scale;
  const float d_all = store_f16(out + 208, 1 / iscale);
  auto* sc = reinterpret_cast<int8_t*>(out + 192);
  for (int j = 0; j < kQK / 16; ++j) sc[j] = int8_t(std::min(127, nearest_int(iscale * scales[j])));
  for (int j = 0; j < kQK / 16; ++j) {
    const float d = d_all * float(sc[j]);
    if (!d) continue;
    for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::clamp(nearest_int(x[16 * j + i] / d), -32, 31) + 32);
  }
  // Each 128-element half: low nibbles of groups 0/1 and 2/3 share ql bytes; the top two bits of
  // its four 32-element groups are bit pairs 0..3 of qh.
  uint8_t* ql = out;
  uint8_t* qh = out + 128;
  for (int j = 0; j < kQK; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
      ql[l] = uint8_t((q1 & 0xf) | ((q3 & 0xf) << 4));
      ql[l + 32] = uint8_t((q2 & 0xf) | ((q4 & 0xf) << 4));
      qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

}  // namespace

void quantize_row_k(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += block_bytes) {
    const float* w = importance ? importance + b * kQK : nullptr;  // the weights of this super-block's columns
    switch (type) {
      case DType::Q2_K: w ? quantize_q2_k_weighted(x, dst, w) : quantize_q2_k(x, dst); break;
      case DType::Q3_K: w ? quantize_q3_k_weighted(x, dst, w) : quantize_q3_k(x, dst); break;
      case DType::Q4_K: quantize_q4_k(x, dst, w); break;
      case DType::Q5_K: quantize_q5_k(x, dst, w); break;
      case DType::Q6_K: quantize_q6_k(x, dst, w); break;
      default: fail("{} is not a K quant type", dtype_name(type));
    }
  }
}

}  // namespace ridge::quant
