// IQ3_XXS and IQ3_S: every 256 values share an f16 d, every 32 a 4-bit scale, and every 4 values
// are one entry of a grid of 4-vectors of odd magnitudes 1..15 (iq3_codebook.h) with a sign per
// value. IQ3_XXS has 256 entries and 7 sign bits per 8 values (the eighth makes the count of minus
// signs even); IQ3_S has 512 entries and all 8 sign bits. Each 32-value group's scale is a weighted
// least-squares fit over candidate reciprocal scales, each rounding the magnitudes to levels and
// moving quads that fall off the grid to their best neighbour (ggml's quantize_row_iq3_xxs_impl and
// quantize_row_iq3_s_impl, the paths llama-quantize takes with and without an imatrix). Byte
// layouts are those ref::dequantize_row reads (kernels/ref/dequant_iq.cc).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "quant/block_quantize.h"
#include "quant/iq3_codebook.h"
#include "quant/scale_search.h"

#ifdef __clang__  // gcc takes -ffp-contract=off from CMake alone
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

constexpr int kQK = 256;               // values under one d
constexpr int kGroup = 32;             // values under one 4-bit scale
constexpr int kGroups = kQK / kGroup;
constexpr int kQuads = kGroup / 4;     // grid entries per group
constexpr int kTopLevel = 7;           // levels 0..7 are the values 1, 3, ..., 15
constexpr float kTopValue = 2 * kTopLevel + 1;
constexpr float kXxsEmpty = 1e-8f;     // IQ3_XXS leaves a group whose magnitudes are all below this empty

// What differs between the two types' scale searches.
struct Search {
  const Iq3Codebook& book;
  int tries;       // candidates (15 + 0.2 t) / max for t in [-tries, tries]
  bool refit_all;  // after the search IQ3_S re-rounds every quad, IQ3_XXS only those it moved off the grid
};

// One group as the search sees it: magnitudes (IQ3_XXS may negate one per 8 for its sign parity),
// their weights and the weights' square roots (what the neighbour search weighs by).
struct Group {
  float x[kGroup], w[kGroup], w_sqrt[kGroup];
  float max;
};

// x² without importance; with it, the imatrix entry times how far the value stands out from the
// super-block's spread sigma2.
void group_weights(const float* xb, const float* importance, float sigma2, Group& g) {
  for (int i = 0; i < kGroup; ++i)
    g.w[i] = importance ? importance[i] * std::sqrt(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
  for (int i = 0; i < kGroup; ++i) g.w_sqrt[i] = std::sqrt(g.w[i]);
}

void find_max(Group& g) {
  g.max = g.x[0];
  for (int i = 1; i < kGroup; ++i) g.max = g.max > g.x[i] ? g.max : g.x[i];
}

// Of the grid entries nearest an off-grid quad, the one closest to x at `scale` by w-weighted
// squared error (the first on ties); its levels go to L.
void best_neighbour(const Iq3Codebook& book, int key, const float* x, const float* w, float scale, int8_t* L) {
  float best = FLT_MAX;
  int chosen = -1;
  for (uint16_t e : book.neighbours(key)) {
    const auto& lv = book.levels(e);
    float d2 = 0;
    for (int i = 0; i < 4; ++i) {
      const float diff = scale * float(2 * lv[size_t(i)] + 1) - x[i];
      d2 += w[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      chosen = e;
    }
  }
  if (chosen < 0) fail("IQ3 quantizer: no grid neighbour for key {}", key);
  std::copy_n(book.levels(chosen).begin(), 4, L);
}

// Levels of quad `k` at reciprocal scale `id` (scale = 1 / id); true when they are on the grid,
// otherwise replaced by the best neighbour.
bool round_quad(const Iq3Codebook& book, const Group& g, int k, float id, float scale, int8_t* L) {
  for (int i = 0; i < 4; ++i) L[i] = int8_t(std::clamp(nearest_int(0.5f * (id * g.x[4 * k + i] - 1)), 0, kTopLevel));
  const int key = iq3_key(L);
  if (book.entry(key) >= 0) return true;
  best_neighbour(book, key, g.x + 4 * k, g.w_sqrt + 4 * k, scale, L);
  return false;
}

// Σ w x q and Σ w q² for levels L (q = 2l + 1).
void level_sums(const Group& g, const int8_t* L, float& sumqx, float& sumq2) {
  sumqx = sumq2 = 0;
  for (int i = 0; i < kGroup; ++i) {
    const float q = float(2 * L[i] + 1);
    sumqx += g.w[i] * g.x[i] * q;
    sumq2 += g.w[i] * q * q;
  }
}

// The group's scale and its grid levels L. The search keeps the candidate whose least-squares fit
// explains the most weighted power (sumqx² / sumq2); quads that had to move off their rounding
// are then re-rounded against that scale and the scale refitted once.
float fit_group(const Search& s, const Group& g, int8_t* L) {
  std::fill_n(L, kGroup, int8_t{0});
  float best = 0, scale = g.max / kTopValue;
  bool on_grid[kQuads], trial_on_grid[kQuads];
  std::fill_n(on_grid, kQuads, !s.refit_all);
  int8_t trial[kGroup];
  float sumqx, sumq2;
  for (int t = -s.tries; t <= s.tries; ++t) {
    const float id = (kTopValue + float(t) * 0.2f) / g.max;
    const float this_scale = 1 / id;
    for (int k = 0; k < kQuads; ++k) trial_on_grid[k] = round_quad(s.book, g, k, id, this_scale, trial + 4 * k);
    level_sums(g, trial, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::copy_n(trial, kGroup, L);
      std::copy_n(trial_on_grid, kQuads, on_grid);
    }
  }
  if (std::count(on_grid, on_grid + kQuads, false) == 0 || !(scale > 0)) return scale;
  const float id = 1 / scale;
  for (int k = 0; k < kQuads; ++k)
    if (s.refit_all || !on_grid[k]) round_quad(s.book, g, k, id, scale, L + 4 * k);
  level_sums(g, L, sumqx, sumq2);
  return sumq2 > 0 ? sumqx / sumq2 : scale;
}

int entry_of(const Iq3Codebook& book, const int8_t* L) {
  const int e = book.entry(iq3_key(L));
  if (e < 0) fail("IQ3 quantizer: levels {} {} {} {} are not on the grid", L[0], L[1], L[2], L[3]);
  return e;
}

float spread(const float* x) {
  float sumx2 = 0;
  for (int i = 0; i < kQK; ++i) sumx2 += x[i] * x[i];
  return 2 * sumx2 / kQK;
}

// The 4-bit code of a group scale under the super-block's d: scale ≈ d * (2l + 1).
int scale_code(float scale, float inv_d) { return std::clamp(nearest_int(0.5f * (inv_d * scale - 1)), 0, 15); }

// Magnitudes of 8 values and their sign bits (IQ3_XXS): an odd count of minus signs flips the
// value that weighs least (its magnitude goes negative), so the stored 7 bits imply the eighth.
uint8_t signs_even(const float* xb, const float* w, float* x) {
  int flips = 0;
  uint8_t bits = 0;
  for (int i = 0; i < 8; ++i) {
    x[i] = xb[i] >= 0 ? xb[i] : -xb[i];
    if (!(xb[i] >= 0)) ++flips, bits = uint8_t(bits | 1 << i);
  }
  if (flips % 2) {
    int least = 0;
    float min = w[0] * xb[0] * xb[0];
    for (int i = 1; i < 8; ++i) {
      const float a = w[i] * xb[i] * xb[i];
      if (a < min) min = a, least = i;
    }
    x[least] = -x[least];
    bits = uint8_t(bits ^ 1 << least);
  }
  return bits & 127;
}

// Magnitudes of 8 values and their sign bits (IQ3_S).
uint8_t signs_all(const float* xb, float* x) {
  uint8_t bits = 0;
  for (int i = 0; i < 8; ++i) {
    x[i] = xb[i] >= 0 ? xb[i] : -xb[i];
    if (!(xb[i] >= 0)) bits = uint8_t(bits | 1 << i);
  }
  return bits;
}

// IQ3_XXS (98 bytes): d, qs[64] (an entry per quad), then per group a u32: four 7-bit sign sets and
// the 4-bit scale on top. d is max_scale / 31 with ggml's 1.0125 fudge.
void quantize_iq3_xxs(const float* x, uint8_t* out, const float* importance) {
  const Search search{Iq3Codebook::of(DType::IQ3_XXS), 15, false};
  std::memset(out, 0, 98);  // d = 0; an empty group keeps entry 0, no signs, scale code 0
  const float sigma2 = spread(x);
  float scales[kGroups];
  uint32_t words[kGroups] = {};
  float max_scale = 0;
  for (int ib = 0; ib < kGroups; ++ib) {
    const float* xb = x + kGroup * ib;
    Group g;
    group_weights(xb, importance ? importance + kGroup * ib : nullptr, sigma2, g);
    uint8_t signs[4];
    for (int k = 0; k < 4; ++k) signs[k] = signs_even(xb + 8 * k, g.w + 8 * k, g.x + 8 * k);
    find_max(g);
    scales[ib] = 0;
    if (g.max < kXxsEmpty) continue;
    int8_t L[kGroup];
    float scale = fit_group(search, g, L);
    if (scale < 0) {  // cannot happen with magnitudes, but the code stores scales unsigned: flip the signs
      scale = -scale;
      for (uint8_t& b : signs) b = uint8_t(~b & 127);
    }
    for (int k = 0; k < kQuads; ++k) out[2 + kQuads * ib + k] = uint8_t(entry_of(search.book, L + 4 * k));
    words[ib] = uint32_t(signs[0]) | uint32_t(signs[1]) << 7 | uint32_t(signs[2]) << 14 | uint32_t(signs[3]) << 21;
    scales[ib] = scale;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (!max_scale) {
    std::memset(out, 0, 98);
    return;
  }
  const float d = max_scale / 31;
  store_f16(out, d * 1.0125f);
  const float inv_d = 1 / d;
  for (int ib = 0; ib < kGroups; ++ib) {
    const uint32_t word = words[ib] | uint32_t(scale_code(scales[ib], inv_d)) << 28;
    std::memcpy(out + 66 + 4 * ib, &word, 4);
  }
}

// IQ3_S (110 bytes): d, qs[64] (entry low bytes), qh[8] (a group's ninth bits), signs[32],
// scales[4] (a nibble per group). d is max_scale / 31 with ggml's 1.033 fudge.
void quantize_iq3_s(const float* x, uint8_t* out, const float* importance) {
  const Search search{Iq3Codebook::of(DType::IQ3_S), 9, true};
  std::memset(out, 0, 110);
  uint8_t* qs = out + 2;
  uint8_t* qh = out + 66;
  uint8_t* signs = out + 74;
  const float sigma2 = spread(x);
  float scales[kGroups];
  float max_scale = 0;
  for (int ib = 0; ib < kGroups; ++ib) {
    const float* xb = x + kGroup * ib;
    Group g;
    group_weights(xb, importance ? importance + kGroup * ib : nullptr, sigma2, g);
    uint8_t group_signs[4];
    for (int k = 0; k < 4; ++k) group_signs[k] = signs_all(xb + 8 * k, g.x + 8 * k);
    find_max(g);
    scales[ib] = 0;
    // ggml skips an all-zero group without moving on in qs and signs, so the groups after it
    // land one slot early (their ninth bits stay at their own place); kept for identical bytes.
    if (!g.max) continue;
    int8_t L[kGroup];
    float scale = fit_group(search, g, L);
    if (scale < 0) {
      scale = -scale;
      for (uint8_t& b : group_signs) b = uint8_t(~b);
    }
    for (int k = 0; k < kQuads; ++k) {
      const int e = entry_of(search.book, L + 4 * k);
      qs[k] = uint8_t(e & 255);
      qh[ib] = uint8_t(qh[ib] | (e >> 8) << k);
    }
    qs += kQuads;
    std::memcpy(signs, group_signs, 4);
    signs += 4;
    scales[ib] = scale;
    max_scale = max_scale > scale ? max_scale : scale;
  }
  if (!max_scale) return;
  const float d = max_scale / 31;
  store_f16(out, d * 1.033f);
  const float inv_d = 1 / d;
  for (int ib = 0; ib < kGroups; ib += 2)
    out[106 + ib / 2] = uint8_t(scale_code(scales[ib], inv_d) | scale_code(scales[ib + 1], inv_d) << 4);
}

}  // namespace

void quantize_row_iq3(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance) {
  const bool xxs = type == DType::IQ3_XXS;
  if (!xxs && type != DType::IQ3_S) fail("{} is not an IQ3 type", dtype_name(type));
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += block_bytes) {
    const float* w = importance ? importance + b * kQK : nullptr;
    xxs ? quantize_iq3_xxs(x, dst, w) : quantize_iq3_s(x, dst, w);
  }
}

}  // namespace ridge::quant
