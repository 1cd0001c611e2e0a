// MXFP4 and NVFP4 by round-to-nearest, with the arithmetic of ggml's quantize_row_mxfp4_ref and
// quantize_row_nvfp4_ref (the latter with a per-tensor factor of 1).
#include <cmath>

#include "kernels/ref/fp4.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::ref {

// The shared exponent puts the block's largest magnitude in the top binade of E2M1 (OCP MX's
// choice: values above 6 · 2^(e-127) clip to it).
void quantize_mxfp4(const float* x, uint8_t* out, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, x += 32, out += 17) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
    const float e = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
    out[0] = uint8_t(e < 0.0f ? 0.0f : e > 254.0f ? 254.0f : e);
    const float d = e8m0_half(out[0]);
    for (int j = 0; j < 16; ++j) out[1 + j] = uint8_t(nearest_fp4(x[j], d) | nearest_fp4(x[j + 16], d) << 4);
  }
}

void quantize_nvfp4(const float* x, uint8_t* out, int64_t n, float global) {
  for (int64_t b = 0; b < n / 64; ++b, out += 36) {
    for (int s = 0; s < 4; ++s, x += 16) {
      float amax = 0.0f;
      for (int j = 0; j < 16; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
      out[s] = f32_to_ue4m3(amax / 6.0f / global);
      const float d = ue4m3_half(out[s]) * global;
      for (int j = 0; j < 8; ++j) out[4 + 8 * s + j] = uint8_t(nearest_fp4(x[j], d) | nearest_fp4(x[j + 8], d) << 4);
    }
  }
}

float nvfp4_global_scale(const float* x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::fabs(x[i]) > amax ? std::fabs(x[i]) : amax;
  return amax > 0.0f && std::isfinite(amax) ? amax / (6.0f * 448.0f) : 1.0f;
}

}  // namespace ridge::ref
