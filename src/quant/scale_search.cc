#include "quant/scale_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/fp16.h"

// Every product and sum below is its own f32 rounding, in ggml's order; a fused multiply-add
// would change levels on near-ties (CMake also passes -ffp-contract=off for quant/).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

// The value of largest magnitude, keeping its sign (the first one on ties).
float signed_absmax(int n, const float* x, float& amax) {
  float max = 0.0f;
  amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  return max;
}

int clamp_level(int l, int lo, int hi) { return std::max(lo, std::min(hi, l)); }

}  // namespace

float store_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
  return f16_to_f32(h);
}

int nearest_int(float v) {
  const float shifted = v + 12582912.0f;  // 1.5 * 2^23: the integer part lands in the mantissa
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

float fit_symmetric(int n, int nmax, const float* x, int8_t* L, const float* weights) {
  float amax;
  const float max = signed_absmax(n, x, amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  auto weight = [&](int i) { return weights ? weights[i] : x[i] * x[i]; };
  // One candidate: the least-squares scale for the levels that reciprocal scale `iscale` gives.
  auto sums = [&](float iscale, float& sumlx, float& suml2) {
    sumlx = suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_level(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = weight(i);
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
  };
  auto take_levels = [&](float iscale) {
    for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + clamp_level(nearest_int(iscale * x[i]), -nmax, nmax - 1));
  };

  float iscale = float(-nmax) / max;
  float sumlx, suml2;
  sums(iscale, sumlx, suml2);
  take_levels(iscale);
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;  // the error reduction sumlx^2 / suml2 of the best candidate
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sums(iscale, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      take_levels(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float fit_symmetric_refined(int n, int nmax, const float* x, int8_t* L) {
  float amax;
  const float max = signed_absmax(n, x, amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  const float iscale = float(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_level(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  // Move one level at a time to the value the other levels' scale asks for, keeping moves that
  // raise sumlx^2 / suml2; at most five sweeps.
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * float(L[i]) * float(L[i]);
        const int l = clamp_level(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (l != L[i]) {
          slx += w * x[i] * float(l);
          sl2 += w * float(l) * float(l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = int8_t(l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float fit_affine(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* scratch,
                 float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;  // the offset only ever lowers the range
  if (max == min) {
    std::fill(L, L + n, uint8_t(0));
    *the_min = -min;
    return 0.0f;
  }
  auto error_of = [&](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };

  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = uint8_t(clamp_level(nearest_int(iscale * (x[i] - min)), 0, nmax));
    best_error += weights[i] * error_of(scale * float(L[i]) + min - x[i]);
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  // Each candidate range gives levels; fit scale and min to them by weighted least squares.
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_level(nearest_int(iscale * (x[i] - min)), 0, nmax);
      scratch[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0) {  // a positive offset is not representable: refit the scale alone
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float error = 0;
      for (int i = 0; i < n; ++i) error += weights[i] * error_of(this_scale * float(scratch[i]) + this_min - x[i]);
      if (error < best_error) {
        std::copy(scratch, scratch + n, L);
        best_error = error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

float fit_positive(int n, int nmax, const float* x, uint8_t* L, const float* weights) {
  float max = 0;
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max < kGroupMaxEps) {
    std::fill(L, L + n, uint8_t(0));
    return 0.0f;
  }
  // Pick the reciprocal scale with the least weighted squared error among nine candidates.
  float iscale = float(nmax) / max;
  for (int i = 0; i < n; ++i) L[i] = uint8_t(nearest_int(iscale * x[i]));  // wraps like ggml's for x < 0
  const float scale = 1 / iscale;
  float best_mse = 0;
  for (int i = 0; i < n; ++i) {
    const float diff = x[i] - scale * float(L[i]);
    best_mse += weights[i] * diff * diff;
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    const float iscale_is = (0.1f * float(is) + float(nmax)) / max;
    const float scale_is = 1 / iscale_is;
    float mse = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::min(nmax, nearest_int(iscale_is * x[i]));
      const float diff = x[i] - scale_is * float(l);
      mse += weights[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  // Then the least-squares scale for its levels, refined one level at a time.
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest_int(iscale * x[i]));
    L[i] = uint8_t(l);
    sumlx += weights[i] * x[i] * float(l);
    suml2 += weights[i] * float(l) * float(l);
  }
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = weights[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      float sl2 = suml2 - w * float(L[i]) * float(L[i]);
      if (slx > 0 && sl2 > 0) {
        const int l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
        if (l != L[i]) {
          slx += w * x[i] * float(l);
          sl2 += w * float(l) * float(l);
          if (slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = uint8_t(l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace ridge::quant
