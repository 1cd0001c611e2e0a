// IQ2_XXS, IQ2_XS and IQ2_S: every 8 values x ≈ s * (2l + 1) * ±1, the eight levels l (0..2) a
// codeword of the type's grid (quant/codebook_search.h). A group shares s: 32 values for IQ2_XXS,
// 16 for the others; s ≈ d * (2n + 1) is stored as the nibble n, d = (largest s) / 31 as f16.
// Each group's s comes from a weighted least-squares search over candidate reciprocal scales,
// the levels of each candidate rounded and, off the grid, moved to the best of the nearest
// codewords (ggml's quantize_row_iq2_xxs_impl, _xs_impl and _s_impl, in the same f32 operations in
// the same order: their roundings decide the bytes). IQ2_XXS and IQ2_XS store 7 sign bits per
// octet (the eighth makes the count of minus signs even, so an odd count flips the value cheapest
// to get wrong) and need importance weights; IQ2_S stores all 8 and weighs by x² without them.
// Byte layouts are those ref::dequantize_row reads (kernels/ref/dequant_iq.cc).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "quant/block_quantize.h"
#include "quant/codebook_search.h"
#include "quant/scale_search.h"

#ifdef __clang__  // gcc takes -ffp-contract=off from CMake alone
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

constexpr int kQK = 256;
constexpr int kTopLevel = 2;      // levels 0..2 stand for 1, 3, 5 times the scale
constexpr float kOddTop = 5;      // 2 * kTopLevel + 1: the largest value a level stands for
constexpr float kIq2sEps = 1e-8f;  // IQ2_S's all-zero group threshold (ggml's GROUP_MAX_EPS_IQ2_S)

// The super-block's per-value weights: the imatrix entry times how far the value stands out from
// the block's spread sigma2; without an imatrix (IQ2_S only) sigma2 / 4 + x².
void value_weights(const float* x, const float* importance, float sigma2, float* w) {
  for (int i = 0; i < kQK; ++i)
    w[i] = importance ? importance[i] * std::sqrt(sigma2 + x[i] * x[i]) : 0.25f * sigma2 + x[i] * x[i];
}

float sum_squares(const float* x) {
  float s = 0;
  for (int i = 0; i < kQK; ++i) s += x[i] * x[i];
  return s;
}

// |x| of one octet into xval, returning the sign bits. With `even`, an odd count of minus signs
// leaves the value of least w x² negative in xval (its sign bit cleared): the stored 7 bits then
// imply the eighth.
uint8_t octet_signs(const float* x, const float* w, float* xval, bool even) {
  int minus = 0;
  unsigned s = 0;
  for (int i = 0; i < 8; ++i) {
    xval[i] = x[i] >= 0 ? x[i] : -x[i];
    if (!(x[i] >= 0)) ++minus, s |= 1u << i;
  }
  if (!even) return uint8_t(s);
  if (minus % 2) {
    int least = 0;
    float min = w[0] * x[0] * x[0];
    for (int i = 1; i < 8; ++i) {
      const float cost = w[i] * x[i] * x[i];
      if (cost < min) min = cost, least = i;
    }
    xval[least] = -xval[least];
    s ^= 1u << least;
  }
  return uint8_t(s & 127);
}

// The octet's levels for reciprocal scale `id`. When they make no codeword, the candidate nearest
// the values at `scale` (weights `sw`: square roots of the fit's) replaces them. Returns whether
// they made one.
bool round_octet(const Codebook& book, const float* xval, const float* sw, float id, float scale, int8_t* L) {
  for (int i = 0; i < 8; ++i) L[i] = int8_t(std::clamp(nearest_int(0.5f * (id * xval[i] - 1)), 0, kTopLevel));
  const uint16_t key = Codebook::key(L);
  if (book.find(key) >= 0) return true;
  const auto candidates = book.candidates(key);
  int best = candidates[0];  // kept only when no distance compares (NaN input), where ggml aborts
  float best_d2 = FLT_MAX;
  for (uint16_t c : candidates) {
    const auto& g = book.levels(c);
    float d2 = 0;
    for (int i = 0; i < 8; ++i) {
      const float diff = scale * float(2 * g[size_t(i)] + 1) - xval[i];
      d2 += sw[i] * diff * diff;
    }
    if (d2 < best_d2) best_d2 = d2, best = c;
  }
  std::copy_n(book.levels(best).begin(), 8, L);
  return false;
}

// Σ w x q and Σ w q² over n values, q = 2l + 1.
void level_sums(int n, const float* xval, const float* w, const int8_t* L, float& sumqx, float& sumq2) {
  sumqx = sumq2 = 0;
  for (int i = 0; i < n; ++i) {
    const float q = float(2 * L[i] + 1);
    sumqx += w[i] * xval[i] * q;
    sumq2 += w[i] * q * q;
  }
}

// One group's values as the fits see them.
struct Group {
  float xval[32];    // |x|, but for the value octet_signs leaves negative in an octet of odd sign count
  float w[32];       // the fit's weights
  float sw[32];      // their square roots: the codeword search's
  uint8_t signs[4];  // per octet
};

Group prepare_group(int n, const float* x, const float* w, bool even_signs) {
  Group g;
  for (int i = 0; i < n; ++i) g.w[i] = w[i], g.sw[i] = std::sqrt(w[i]);
  for (int k = 0; k < n / 8; ++k) g.signs[k] = octet_signs(x + 8 * k, g.w + 8 * k, g.xval + 8 * k, even_signs);
  return g;
}

float largest(int n, const float* v) {
  float m = v[0];
  for (int i = 1; i < n; ++i) m = std::max(m, v[i]);
  return m;
}

// IQ2_XXS's 32 values: the start is the positive-levels fit (make_qp_quants with levels 0..3);
// 13 candidates around it, then every octet re-rounded at the best scale. False: the group is
// stored as zeros.
bool fit_group32(const Codebook& book, const Group& g, int8_t* L, float& scale) {
  constexpr int n = 32;
  if (largest(n, g.xval) < kGroupMaxEps) return false;
  uint8_t start_levels[n];
  scale = fit_positive(n, kTopLevel + 2, g.xval, start_levels, g.w);
  const float eff_max = scale * float(kTopLevel + 1);
  if (eff_max <= 0) return false;
  float best = 0, sumqx, sumq2;
  int8_t trial[n];
  for (int t = -6; t <= 6; ++t) {
    const float id = (kOddTop + float(t) * 0.1f) / eff_max;
    const float trial_scale = 1 / id;
    for (int k = 0; k < n / 8; ++k) round_octet(book, g.xval + 8 * k, g.sw + 8 * k, id, trial_scale, trial + 8 * k);
    level_sums(n, g.xval, g.w, trial, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::copy_n(trial, n, L);
    }
  }
  if (scale > 0) {
    const float id = 1 / scale;
    for (int k = 0; k < n / 8; ++k) round_octet(book, g.xval + 8 * k, g.sw + 8 * k, id, scale, L + 8 * k);
    level_sums(n, g.xval, g.w, L, sumqx, sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return true;
}

// IQ2_XS's and IQ2_S's 16 values: 19 candidates around max / 5, then the octets the best one put
// off the grid re-rounded at its scale.
bool fit_group16(const Codebook& book, const Group& g, float eps, int8_t* L, float& scale) {
  constexpr int n = 16;
  std::fill_n(L, n, int8_t(0));
  const float max = largest(n, g.xval);
  if (max < eps) return false;
  float best = 0, sumqx, sumq2;
  scale = max / kOddTop;
  bool on_grid[2] = {true, true}, trial_on_grid[2];
  int8_t trial[n];
  for (int t = -9; t <= 9; ++t) {
    const float id = (kOddTop + float(t) * 0.1f) / max;
    const float trial_scale = 1 / id;
    for (int k = 0; k < 2; ++k)
      trial_on_grid[k] = round_octet(book, g.xval + 8 * k, g.sw + 8 * k, id, trial_scale, trial + 8 * k);
    level_sums(n, g.xval, g.w, trial, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::copy_n(trial, n, L);
      std::copy_n(trial_on_grid, 2, on_grid);
    }
  }
  if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
    const float id = 1 / scale;
    for (int k = 0; k < 2; ++k)
      if (!on_grid[k]) round_octet(book, g.xval + 8 * k, g.sw + 8 * k, id, scale, L + 8 * k);
    level_sums(n, g.xval, g.w, L, sumqx, sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return true;
}

// The codeword of an octet's final levels: every fit ends on the grid.
int codeword(const Codebook& book, const int8_t* L) {
  const int c = book.find(Codebook::key(L));
  if (c < 0) fail("codebook quantizer: levels off the grid");  // unreachable: a bug if seen
  return c;
}

// A group's 4-bit scale n: s ≈ d * (2n + 1) / 2 with id = 1 / d.
uint32_t scale_nibble(float id, float s) { return uint32_t(std::clamp(nearest_int(0.5f * (id * s - 1)), 0, 15)); }

// IQ2_XXS (66 bytes): d, then per 32 values two u32: four codeword indices (a byte each), and
// four 7-bit sign sets with the scale nibble on top.
void quantize_iq2_xxs(const Codebook& book, const float* x, uint8_t* out, const float* importance) {
  float w[kQK], scales[kQK / 32];
  value_weights(x, importance, sum_squares(x) / kQK, w);
  uint32_t q[2 * kQK / 32] = {};
  float max_scale = 0;
  for (int ib = 0; ib < kQK / 32; ++ib) {
    Group g = prepare_group(32, x + 32 * ib, w + 32 * ib, true);
    int8_t L[32];
    float scale = 0;
    scales[ib] = 0;
    if (!fit_group32(book, g, L, scale)) continue;
    if (scale < 0) {  // not expected; the stored scale is unsigned, so the signs take the minus
      scale = -scale;
      for (uint8_t& s : g.signs) s = uint8_t(~s & 127);
    }
    for (int k = 0; k < 4; ++k) {
      q[2 * ib] |= uint32_t(codeword(book, L + 8 * k)) << (8 * k);
      q[2 * ib + 1] |= uint32_t(g.signs[k]) << (7 * k);
    }
    scales[ib] = scale;
    max_scale = std::max(max_scale, scale);
  }
  std::memset(out, 0, 66);
  if (!max_scale) return;
  const float d = max_scale / 31;
  store_f16(out, d);
  const float id = 1 / d;
  for (int ib = 0; ib < kQK / 32; ++ib) q[2 * ib + 1] |= scale_nibble(id, scales[ib]) << 28;
  std::memcpy(out + 2, q, sizeof q);
}

// IQ2_XS (74 bytes): d, qs[32] u16 (9-bit codeword index, 7 sign bits above), scales[8] (a nibble
// per 16 values).
void quantize_iq2_xs(const Codebook& book, const float* x, uint8_t* out, const float* importance) {
  float w[kQK], scales[kQK / 16];
  value_weights(x, importance, sum_squares(x) / kQK, w);
  uint16_t q[kQK / 8] = {};
  float max_scale = 0;
  for (int ib = 0; ib < kQK / 16; ++ib) {
    Group g = prepare_group(16, x + 16 * ib, w + 16 * ib, true);
    int8_t L[16];
    float scale = 0;
    scales[ib] = 0;
    if (!fit_group16(book, g, kGroupMaxEps, L, scale)) continue;
    if (scale < 0) {
      scale = -scale;
      for (int k = 0; k < 2; ++k) g.signs[k] = uint8_t(~g.signs[k] & 127);
    }
    for (int k = 0; k < 2; ++k) q[2 * ib + k] = uint16_t(codeword(book, L + 8 * k) | g.signs[k] << 9);
    scales[ib] = scale;
    max_scale = std::max(max_scale, scale);
  }
  std::memset(out, 0, 74);
  if (!max_scale) return;
  const float d = max_scale / 31;
  store_f16(out, d);
  const float id = 1 / d;
  std::memcpy(out + 2, q, sizeof q);
  for (int ib = 0; ib < kQK / 16; ++ib) out[66 + ib / 2] |= uint8_t(scale_nibble(id, scales[ib]) << (4 * (ib % 2)));
}

// IQ2_S (82 bytes): d (0.9875 of the scales' unit: ggml's tuning), qs[32] (codeword index low
// bytes), signs[32] (a byte per octet), qh[8] (the indices' top 2 bits), scales[8] (a nibble per
// 16 values). Groups are written as they are fitted, so an all-zero super-block still keeps the
// sign bytes of groups above the zero threshold, as ggml's does.
void quantize_iq2_s(const Codebook& book, const float* x, uint8_t* out, const float* importance) {
  float w[kQK], scales[kQK / 16];
  value_weights(x, importance, 2 * sum_squares(x) / kQK, w);
  std::memset(out, 0, 82);
  uint8_t* qs = out + 2;
  uint8_t* signs = out + 34;
  uint8_t* qh = out + 66;
  float max_scale = 0;
  for (int ib = 0; ib < kQK / 16; ++ib) {
    Group g = prepare_group(16, x + 16 * ib, w + 16 * ib, false);
    int8_t L[16];
    float scale = 0;
    scales[ib] = 0;
    if (!fit_group16(book, g, kIq2sEps, L, scale)) continue;
    if (scale < 0) {
      scale = -scale;
      for (int k = 0; k < 2; ++k) g.signs[k] = uint8_t(~g.signs[k]);
    }
    for (int k = 0; k < 2; ++k) {
      const int i8 = 2 * ib + k, c = codeword(book, L + 8 * k);
      qs[i8] = uint8_t(c & 255);
      qh[i8 / 4] = uint8_t(qh[i8 / 4] | (c >> 8) << (2 * (i8 % 4)));
      signs[i8] = g.signs[k];
    }
    scales[ib] = scale;
    max_scale = std::max(max_scale, scale);
  }
  if (!max_scale) return;
  const float d = max_scale / 31;
  store_f16(out, d * 0.9875f);
  const float id = 1 / d;
  for (int ib = 0; ib < kQK / 16; ++ib) out[74 + ib / 2] |= uint8_t(scale_nibble(id, scales[ib]) << (4 * (ib % 2)));
}

}  // namespace

void quantize_row_iq2(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  if (type != DType::IQ2_XXS && type != DType::IQ2_XS && type != DType::IQ2_S)
    fail("{} is not an IQ2 type", dtype_name(type));
  if (!importance && type != DType::IQ2_S) fail("{} needs importance weights (an imatrix)", dtype_name(type));
  const Codebook& book = Codebook::of(type);
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += block_bytes) {
    const float* w = importance ? importance + b * kQK : nullptr;
    if (type == DType::IQ2_XXS) quantize_iq2_xxs(book, x, dst, w);
    else if (type == DType::IQ2_XS) quantize_iq2_xs(book, x, dst, w);
    else quantize_iq2_s(book, x, dst, w);
  }
}

}  // namespace ridge::quant
