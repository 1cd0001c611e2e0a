// IQ4_NL and IQ4_XS: every 32 values x ≈ s * v[L], v the sixteen non-uniform levels of
// ref::kIq4nlValues and L a 4-bit index. IQ4_NL stores s as its block's f16; IQ4_XS groups eight
// such blocks under one f16 d and stores each block's s as a 6-bit multiple of it (s = d * (l - 32)).
// Each block's s comes from a weighted least-squares search over 15 candidate reciprocal scales
// (ggml's quantize_row_iq4_nl_impl with its seven tries either side, the path llama-quantize
// takes with and without an imatrix); then every value is re-rounded against the scale the
// decoder will see. Byte layouts are those ref::dequantize_row reads (kernels/ref/dequant_iq.cc).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/ref/iq_grids.h"
#include "quant/block_quantize.h"
#include "quant/scale_search.h"

#ifdef __clang__  // gcc takes -ffp-contract=off from CMake alone
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

// The values one scale covers, and IQ4_XS's super-block of eight such blocks under one d.
constexpr int kBlock = 32;
constexpr int kSuperBlock = 256;
constexpr int kTries = 7;  // candidate reciprocal scales either side of the extreme level's
const auto& kLevels = ref::kIq4nlValues;

float level(int i) { return float(kLevels[size_t(i)]); }

// The index of the level nearest v (v already divided by the scale); a value halfway between two
// levels takes the larger, one outside the table its end.
int nearest_level(float v) {
  if (v <= level(0)) return 0;
  if (v >= level(15)) return 15;
  int above = 1;  // the first level above v
  while (above < 15 && !(v < level(above))) ++above;
  return v - level(above - 1) < level(above) - v ? above - 1 : above;
}

// Per-value weights of one block: x² without importance; with it, the imatrix entry times how far
// the value stands out from the spread of the (super-)block, sigma2.
void block_weights(const float* x, const float* importance, float sigma2, float* w) {
  for (int j = 0; j < kBlock; ++j)
    w[j] = importance ? importance[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

// Σ w q x and Σ w q² for the levels that reciprocal scale `iscale` gives.
void level_sums(const float* x, const float* w, float iscale, float& sumqx, float& sumq2) {
  sumqx = sumq2 = 0;
  for (int j = 0; j < kBlock; ++j) {
    const float q = level(nearest_level(iscale * x[j]));
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
}

// The block's scale: the least-squares one for the levels of the best of 2 * kTries + 2
// candidates, the first being the scale that maps the value of largest magnitude onto the
// extreme level. 0 for a block of (near) zeros.
float fit_block(const float* x, const float* w) {
  float amax = 0, max = 0;
  for (int j = 0; j < kBlock; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax < kGroupMaxEps) return 0;
  float sumqx, sumq2;
  level_sums(x, w, 1 / (-max / level(0)), sumqx, sumq2);
  float d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;  // sumqx² / sumq2: how much of the weighted power the fit explains
  for (int t = -kTries; t <= kTries; ++t) {
    level_sums(x, w, float(t + kLevels[0]) / max, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// Nibbles: element j in the low half of byte j, element j + 16 in the high half.
void pack_block(const float* x, float iscale, uint8_t* qs) {
  uint8_t L[kBlock];
  for (int j = 0; j < kBlock; ++j) L[j] = uint8_t(nearest_level(iscale * x[j]));
  for (int j = 0; j < kBlock / 2; ++j) qs[j] = uint8_t(L[j] | (L[j + kBlock / 2] << 4));
}

float spread(const float* x, int n) {
  float s = 0;
  for (int j = 0; j < n; ++j) s += x[j] * x[j];
  return s * (2.f / float(n));
}

// IQ4_NL (18 bytes): d, qs[16].
void quantize_iq4_nl(const float* x, uint8_t* out, const float* importance) {
  float w[kBlock];
  block_weights(x, importance, spread(x, kBlock), w);
  const float d = fit_block(x, w);
  store_f16(out, d);
  pack_block(x, d ? 1 / d : 0.f, out + 2);
}

// IQ4_XS (136 bytes): d, scales_h (u16: two high bits per block), scales_l[4] (a low nibble per
// block), qs[128] (16 per block).
void quantize_iq4_xs(const float* x, uint8_t* out, const float* importance) {
  constexpr int kBlocks = kSuperBlock / kBlock;
  const float sigma2 = spread(x, kSuperBlock);
  float scales[kBlocks], w[kBlock];
  float max_scale = 0, amax_scale = 0;  // the block scale of largest magnitude, with its sign
  for (int ib = 0; ib < kBlocks; ++ib) {
    block_weights(x + kBlock * ib, importance ? importance + kBlock * ib : nullptr, sigma2, w);
    scales[ib] = fit_block(x + kBlock * ib, w);
    if (std::fabs(scales[ib]) > amax_scale) {
      amax_scale = std::fabs(scales[ib]);
      max_scale = scales[ib];
    }
  }
  const float d = -max_scale / 32;  // -0 for an all-zero super-block, stored as f16 -0 like ggml's
  store_f16(out, d);
  const float id = d ? 1 / d : 0.f;
  uint16_t scales_h = 0;
  uint8_t* scales_l = out + 4;
  std::memset(scales_l, 0, kBlocks / 2);
  for (int ib = 0; ib < kBlocks; ++ib) {
    const int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
    const float dl = d * float(l);  // the block's scale as the f32 d gives it, not the stored f16
    pack_block(x + kBlock * ib, dl ? 1 / dl : 0.f, out + 8 + 16 * ib);
    const int stored = l + 32;
    scales_l[ib / 2] = uint8_t(scales_l[ib / 2] | ((stored & 0xf) << (4 * (ib % 2))));
    scales_h = uint16_t(scales_h | ((stored >> 4) << (2 * ib)));
  }
  std::memcpy(out + 2, &scales_h, 2);
}

}  // namespace

void quantize_row_iq4(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  const bool xs = type == DType::IQ4_XS;
  if (!xs && type != DType::IQ4_NL) fail("{} is not an IQ4 type", dtype_name(type));
  const int64_t block = xs ? kSuperBlock : kBlock;
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / block; ++b, x += block, dst += block_bytes) {
    const float* w = importance ? importance + b * block : nullptr;
    xs ? quantize_iq4_xs(x, dst, w) : quantize_iq4_nl(x, dst, w);
  }
}

}  // namespace ridge::quant
