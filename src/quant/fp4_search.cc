// MXFP4 and NVFP4 with importance weights: each block's (group's) scale is chosen among the
// round-to-nearest choice and its neighbours by the importance-weighted squared error, the codes
// then rounded to nearest as ggml rounds them. Without weights the quantizers stay ggml's (the same
// bytes as llama.cpp's); llama.cpp ignores an imatrix for these types, so with one ridge's file differs.
#include <algorithm>
#include <cmath>

#include "kernels/ref/fp4.h"
#include "quant/block_quantize.h"

namespace ridge::quant {
namespace {

// Σ w (v(code) d - x)² with codes rounded to nearest for d, and the codes.
double weighted_error(const float* x, const float* w, int n, float d, uint8_t* codes) {
  double err = 0;
  for (int j = 0; j < n; ++j) {
    codes[j] = ref::nearest_fp4(x[j], d);
    const double e = double(ref::kFp4Values[codes[j]]) * d - x[j];
    err += double(w[j]) * e * e;
  }
  return err;
}

}  // namespace

void quantize_row_fp4_weighted(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance, float global) {
  if (type == DType::MXFP4) {
    for (int64_t b = 0; b < n / 32; ++b, x += 32, importance += 32, dst += 17) {
      ref::quantize_mxfp4(x, dst, 1);  // ggml's exponent, then its neighbours
      uint8_t codes[32], best_codes[32];
      double best = weighted_error(x, importance, 32, ref::e8m0_half(dst[0]), best_codes);
      const int e0 = dst[0];
      for (int e = std::max(0, e0 - 1); e <= std::min(254, e0 + 1); ++e) {
        if (e == e0) continue;  // ggml's choice, measured above
        const double err = weighted_error(x, importance, 32, ref::e8m0_half(uint8_t(e)), codes);
        if (err < best) best = err, dst[0] = uint8_t(e), std::copy(codes, codes + 32, best_codes);
      }
      for (int j = 0; j < 16; ++j) dst[1 + j] = uint8_t(best_codes[j] | best_codes[j + 16] << 4);
    }
    return;
  }
  for (int64_t b = 0; b < n / 64; ++b, dst += 36) {
    for (int s = 0; s < 4; ++s, x += 16, importance += 16) {
      float amax = 0;
      for (int j = 0; j < 16; ++j) amax = std::max(amax, std::fabs(x[j]));
      const int s0 = ref::f32_to_ue4m3(amax / 6.0f / global);
      uint8_t codes[16], best_codes[16];
      int best_s = s0;
      double best = weighted_error(x, importance, 16, ref::ue4m3_half(uint8_t(s0)) * global, best_codes);
      for (int c = std::max(1, s0 - 2); c <= std::min(0x7e, s0 + 2); ++c) {
        if (c == s0) continue;  // the nearest scale, measured above
        const double err = weighted_error(x, importance, 16, ref::ue4m3_half(uint8_t(c)) * global, codes);
        if (err < best) best = err, best_s = c, std::copy(codes, codes + 16, best_codes);
      }
      dst[s] = uint8_t(best_s);
      for (int j = 0; j < 8; ++j) dst[4 + 8 * s + j] = uint8_t(best_codes[j] | best_codes[j + 8] << 4);
    }
  }
}

}  // namespace ridge::quant
