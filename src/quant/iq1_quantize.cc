// IQ1_S and IQ1_M: every 8 values x ≈ s * (g + δ), g ∈ {-1, 0, 1}^8 a codeword of the 2048-entry
// grid (quant/codebook_search.h) and δ = ±1/8, one sign per group of 32 values (IQ1_S) or per
// octet (IQ1_M, whose groups are 16 values). With three levels the best split is found
// exhaustively: the group's values sorted, every pair of boundaries (i1 <= i2) splits them into
// the levels -1, 0, 1, and prefix sums give each split's least-squares scale and score. Octets
// whose levels make no codeword take the nearest of their candidates. Each group's s ≈ d * (2n + 1)
// is stored as 3 bits n. These are ggml's quantize_row_iq1_s_impl and _m_impl in the same f32
// operations in the same order: their roundings decide the bytes. IQ1_S needs importance weights;
// IQ1_M weighs by x² without them. Byte layouts are those ref::dequantize_row reads
// (kernels/ref/dequant_iq.cc).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/iq_grids.h"
#include "quant/block_quantize.h"
#include "quant/codebook_search.h"
#include "quant/scale_search.h"

#ifdef __clang__  // gcc takes -ffp-contract=off from CMake alone
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

constexpr int kQK = 256;
constexpr float kIq1sEps = 1e-12f;  // all-zero group thresholds (ggml's GROUP_MAX_EPS_IQ1_S, _IQ1_M)
constexpr float kIq1mEps = 1e-7f;
// What the levels 0, 1, 2 stand for with the shift +δ and with -δ.
constexpr float kDelta = ref::kIq1Delta;
constexpr float kPlus[3] = {-1 + kDelta, kDelta, 1 + kDelta};
constexpr float kMinus[3] = {-1 - kDelta, -kDelta, 1 - kDelta};

float sum_squares(const float* x) {
  float s = 0;
  for (int i = 0; i < kQK; ++i) s += x[i] * x[i];
  return s;
}

// The super-block's per-value weights: the imatrix entry times how far the value stands out from
// the block's spread sigma2; without one (IQ1_M only) x².
void value_weights(const float* x, const float* importance, float sigma2, float* w) {
  for (int i = 0; i < kQK; ++i) w[i] = importance ? importance[i] * std::sqrt(sigma2 + x[i] * x[i]) : x[i] * x[i];
}

float largest_magnitude(int n, const float* x) {
  float m = std::fabs(x[0]);
  for (int i = 1; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// The group's indices by ascending value, equal values in index order: ggml sorts with glibc's
// qsort, a merge sort for arrays this small, so stable; the prefix sums' roundings follow the order.
void sort_by_value(int n, const float* x, int* order) {
  std::iota(order, order + n, 0);
  std::stable_sort(order, order + n, [x](int a, int b) { return x[a] < x[b]; });
}

// Levels from the best split: the sorted values below i1 are 0, those below i2 are 1, the rest 2.
void split_levels(int n, const int* order, int i1, int i2, int8_t* L) {
  for (int j = 0; j < n; ++j) L[order[j]] = int8_t(j < i1 ? 0 : j < i2 ? 1 : 2);
}

// An octet's codeword: its levels' own when they make one, else the candidate nearest x at
// `scale` with the shift's values `v` (the first when no distance compares, NaN input, where ggml
// aborts). Clears `on_grid` for a candidate.
int octet_codeword(const Codebook& book, const int8_t* L, const float* x, const float* w, float scale, const float* v,
                   bool& on_grid) {
  const uint16_t key = Codebook::key(L);
  const int c = book.find(key);
  if (c >= 0) return c;
  on_grid = false;
  const auto candidates = book.candidates(key);
  int best = candidates[0];
  float best_d2 = FLT_MAX;
  for (uint16_t cand : candidates) {
    const auto& g = book.levels(cand);
    float d2 = 0;
    for (int i = 0; i < 8; ++i) {
      const float diff = scale * v[g[size_t(i)]] - x[i];
      d2 += w[i] * diff * diff;
    }
    if (d2 < best_d2) best_d2 = d2, best = cand;
  }
  return best;
}

// Σ w q x and Σ w q² of one octet's codeword, q = v[level] * factor.
void codeword_sums(const Codebook& book, int c, const float* x, const float* w, const float* v, float factor,
                   float& sumqx, float& sumq2) {
  const auto& g = book.levels(c);
  for (int j = 0; j < 8; ++j) {
    const float q = v[g[size_t(j)]] * factor;
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
}

// One fitted group: its scale, shift choice and codewords; `fitted` false stores it as zeros.
struct GroupFit {
  bool fitted = false;
  float scale = 0;
  int shift = 0;  // IQ1_S: +1 or -1; IQ1_M: bit 1 the first octet's minus, bit 0 the second's
  int codewords[4] = {};
};

// IQ1_S's 32 values under one shift.
GroupFit fit_group_s(const Codebook& book, const float* x, const float* w) {
  constexpr int n = 32;
  GroupFit fit;
  fit.shift = 1;
  const float max = largest_magnitude(n, x);
  if (max < kIq1sEps) return fit;
  int order[n];
  sort_by_value(n, x, order);
  float sumx[n + 1], sumw[n + 1];
  sumx[0] = sumw[0] = 0;
  for (int j = 0; j < n; ++j) {
    const int i = order[j];
    sumx[j + 1] = sumx[j] + w[i] * x[i];
    sumw[j + 1] = sumw[j] + w[i];
  }
  float best_score = -FLT_MAX, scale = max;
  int best1 = -1, best2 = -1, shift = 0;
  for (int i1 = 0; i1 <= n; ++i1) {
    for (int i2 = i1; i2 <= n; ++i2) {
      for (int s : {1, -1}) {
        const float* v = s == 1 ? kPlus : kMinus;
        const float sumqx = (sumx[i1] - sumx[0]) * v[0] + (sumx[i2] - sumx[i1]) * v[1] + (sumx[n] - sumx[i2]) * v[2];
        const float sumq2 = (sumw[i1] - sumw[0]) * v[0] * v[0] + (sumw[i2] - sumw[i1]) * v[1] * v[1] +
                            (sumw[n] - sumw[i2]) * v[2] * v[2];
        if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
          scale = sumqx / sumq2;
          best_score = scale * sumqx;
          best1 = i1, best2 = i2, shift = s;
        }
      }
    }
  }
  if (best1 < 0 || best2 < 0 || shift == 0) return fit;
  int8_t L[n];
  split_levels(n, order, best1, best2, L);
  if (scale < 0) {  // the stored scale is unsigned: mirror the levels and the shift instead
    for (int8_t& l : L) l = int8_t(2 - l);
    scale = -scale;
    shift = -shift;
  }
  const float* v = shift == 1 ? kPlus : kMinus;
  bool on_grid = true;
  for (int k = 0; k < n / 8; ++k)
    fit.codewords[k] = octet_codeword(book, L + 8 * k, x + 8 * k, w + 8 * k, scale, v, on_grid);
  if (!on_grid) {
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < n / 8; ++k) codeword_sums(book, fit.codewords[k], x + 8 * k, w + 8 * k, v, 1, sumqx, sumq2);
    if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
  }
  fit.fitted = true;
  fit.scale = scale;
  fit.shift = shift;
  return fit;
}

// IQ1_M's shift values for octet k of a group with shift choice `shift`.
const float* octet_values(int shift, int k) { return (k == 0 ? shift < 2 : shift % 2 == 0) ? kPlus : kMinus; }

// IQ1_M's 16 values, a shift per octet: the prefix sums are kept per octet, so one pass over the
// splits scores all four shift choices (x_p/x_m for each half).
GroupFit fit_group_m(const Codebook& book, const float* x, const float* w) {
  constexpr int n = 16;
  GroupFit fit;
  const float max = largest_magnitude(n, x);
  if (max < kIq1mEps) return fit;
  int order[n];
  sort_by_value(n, x, order);
  float px[2][n + 1], pw[2][n + 1];  // per octet h: Σ w x and Σ w over the first j sorted values
  px[0][0] = px[1][0] = pw[0][0] = pw[1][0] = 0;
  for (int j = 0; j < n; ++j) {
    const int i = order[j], h = i < n / 2 ? 0 : 1;
    px[h][j + 1] = px[h][j] + w[i] * x[i];
    px[1 - h][j + 1] = px[1 - h][j];
    pw[h][j + 1] = pw[h][j] + w[i];
    pw[1 - h][j + 1] = pw[1 - h][j];
  }
  // The levels' values step by -1 from v[2] down, so a split's Σ w q x is T v[2] - P(i1) - P(i2).
  const float tx[2] = {px[0][n], px[1][n]}, tw[2] = {pw[0][n], pw[1][n]};
  const float p2 = kPlus[2], m2 = kMinus[2];
  const float cp1 = kPlus[0] * kPlus[0] - kPlus[1] * kPlus[1], cp2 = kPlus[1] * kPlus[1] - kPlus[2] * kPlus[2];
  const float cm1 = kMinus[0] * kMinus[0] - kMinus[1] * kMinus[1], cm2 = kMinus[1] * kMinus[1] - kMinus[2] * kMinus[2];
  float best_score = -FLT_MAX, scale = max;
  int best1 = -1, best2 = -1, shift = -1;
  for (int i1 = 0; i1 <= n; ++i1) {
    for (int i2 = i1; i2 <= n; ++i2) {
      float qx_p[2], qx_m[2], q2_p[2], q2_m[2];
      for (int h = 0; h < 2; ++h) {
        const float sx = px[h][i1] + px[h][i2];
        qx_p[h] = tx[h] * p2 - sx;
        qx_m[h] = tx[h] * m2 - sx;
        q2_p[h] = tw[h] * p2 * p2 + pw[h][i1] * cp1 + pw[h][i2] * cp2;
        q2_m[h] = tw[h] * m2 * m2 + pw[h][i1] * cm1 + pw[h][i2] * cm2;
      }
      const float sumqx[4] = {qx_p[0] + qx_p[1], qx_p[0] + qx_m[1], qx_m[0] + qx_p[1], qx_m[0] + qx_m[1]};
      const float sumq2[4] = {q2_p[0] + q2_p[1], q2_p[0] + q2_m[1], q2_m[0] + q2_p[1], q2_m[0] + q2_m[1]};
      for (int k = 0; k < 4; ++k) {
        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
          scale = sumqx[k] / sumq2[k];
          best_score = scale * sumqx[k];
          best1 = i1, best2 = i2, shift = k;
        }
      }
    }
  }
  if (best1 < 0 || best2 < 0 || shift < 0) return fit;
  int8_t L[n];
  split_levels(n, order, best1, best2, L);
  if (scale < 0) {  // mirrored levels swap both octets' shifts
    for (int8_t& l : L) l = int8_t(2 - l);
    scale = -scale;
    shift = 3 - shift;
  }
  bool on_grid = true;
  for (int k = 0; k < 2; ++k)
    fit.codewords[k] = octet_codeword(book, L + 8 * k, x + 8 * k, w + 8 * k, scale, octet_values(shift, k), on_grid);
  if (!on_grid) {
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < 2; ++k)
      codeword_sums(book, fit.codewords[k], x + 8 * k, w + 8 * k, octet_values(shift, k), 1, sumqx, sumq2);
    if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
  }
  fit.fitted = true;
  fit.scale = scale;
  fit.shift = shift;
  return fit;
}

// A group's 3-bit scale n: s ≈ d * (2n + 1) with id = 1 / d.
int scale_bits(float id, float s) { return std::clamp(nearest_int(0.5f * (id * s - 1)), 0, 7); }

// IQ1_S (50 bytes): d (1.125 of the scales' unit: ggml's tuning), qs[32] (codeword index low
// bytes), qh[8] u16 per 32 values: four 3-bit index tops, the scale bits, the shift's minus on top.
void quantize_iq1_s(const Codebook& book, const float* x, uint8_t* out, const float* importance) {
  float w[kQK];
  value_weights(x, importance, 2 * sum_squares(x) / kQK, w);
  std::memset(out, 0, 50);
  uint16_t qh[kQK / 32] = {};
  GroupFit fits[kQK / 32];
  float max_scale = 0;
  for (int ib = 0; ib < kQK / 32; ++ib) {
    fits[ib] = fit_group_s(book, x + 32 * ib, w + 32 * ib);
    if (!fits[ib].fitted) continue;
    for (int k = 0; k < 4; ++k) {
      out[2 + 4 * ib + k] = uint8_t(fits[ib].codewords[k] & 255);
      qh[ib] = uint16_t(qh[ib] | (fits[ib].codewords[k] >> 8) << (3 * k));
    }
    max_scale = std::max(max_scale, fits[ib].scale);
  }
  if (max_scale) {
    const float d = max_scale / 15;
    store_f16(out, d * 1.125f);
    const float id = 1 / d;
    for (int ib = 0; ib < kQK / 32; ++ib) {
      const int bits = scale_bits(id, fits[ib].scale) | (fits[ib].shift == -1 ? 8 : 0);
      qh[ib] = uint16_t(qh[ib] | bits << 12);
    }
  }
  std::memcpy(out + 34, qh, sizeof qh);
}

// IQ1_M (56 bytes): qs[32] (codeword index low bytes), qh[16] (a nibble per octet: 3 index bits
// and the shift's minus), scales[4] u16: 3-bit scales, one per 16 values, and in the four top
// nibbles the f16 d. d is refitted by least squares to the stored scales and codewords, then
// stored as 1.1125 of it (ggml's tuning).
void quantize_iq1_m(const Codebook& book, const float* x, uint8_t* out, const float* importance) {
  float w[kQK];
  value_weights(x, importance, 2 * sum_squares(x) / kQK, w);
  std::memset(out, 0, 56);
  uint8_t* qh = out + 32;
  GroupFit fits[kQK / 16];
  float max_scale = 0;
  for (int ib = 0; ib < kQK / 16; ++ib) {
    fits[ib] = fit_group_m(book, x + 16 * ib, w + 16 * ib);
    if (!fits[ib].fitted) continue;
    for (int k = 0; k < 2; ++k) out[2 * ib + k] = uint8_t(fits[ib].codewords[k] & 255);
    qh[ib] = uint8_t((fits[ib].codewords[0] >> 8) | (fits[ib].codewords[1] >> 8) << 4);
    max_scale = std::max(max_scale, fits[ib].scale);
  }
  if (!max_scale) return;
  uint16_t sc[4] = {};
  float d = max_scale / 15;
  const float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int ib = 0; ib < kQK / 16; ++ib) {
    const int l = scale_bits(id, fits[ib].scale);
    sc[ib / 4] = uint16_t(sc[ib / 4] | l << (3 * (ib % 4)));
    const int shift = fits[ib].shift;  // 0 for a group stored as zeros: codeword 0, +δ
    qh[ib] = uint8_t(qh[ib] | ((shift & 2) ? 0x08 : 0) | ((shift & 1) ? 0x80 : 0));
    for (int k = 0; k < 2; ++k)
      codeword_sums(book, fits[ib].codewords[k], x + 16 * ib + 8 * k, w + 16 * ib + 8 * k, octet_values(shift, k),
                    float(2 * l + 1), sumqx, sumq2);
  }
  if (sumq2 > 0) d = sumqx / sumq2;
  const uint16_t bits = f32_to_f16(d * 1.1125f);
  sc[0] = uint16_t(sc[0] | (bits & 0x000f) << 12);
  sc[1] = uint16_t(sc[1] | (bits & 0x00f0) << 8);
  sc[2] = uint16_t(sc[2] | (bits & 0x0f00) << 4);
  sc[3] = uint16_t(sc[3] | (bits & 0xf000));
  std::memcpy(out + 48, sc, sizeof sc);
}

}  // namespace

void quantize_row_iq1(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  if (type != DType::IQ1_S && type != DType::IQ1_M) fail("{} is not an IQ1 type", dtype_name(type));
  if (!importance && type == DType::IQ1_S) fail("IQ1_S needs importance weights (an imatrix)");
  const Codebook& book = Codebook::of(type);
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += block_bytes) {
    const float* w = importance ? importance + b * kQK : nullptr;
    type == DType::IQ1_S ? quantize_iq1_s(book, x, dst, w) : quantize_iq1_m(book, x, dst, w);
  }
}

}  // namespace ridge::quant
