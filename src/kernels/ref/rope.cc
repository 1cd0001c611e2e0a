#include "kernels/ref/rope.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::ref {
namespace {

// 1 for the pairs below corr_low (extrapolated: full speed), 0 above corr_high (interpolated).
float yarn_ramp(float low, float high, int64_t pair) {
  const float y = (float(pair) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void rope(const RopeArgs& args, const int32_t* positions, int64_t n_tokens, float* x) {
  const int64_t half = args.rope_dim / 2;
  std::vector<float> cos_sin(static_cast<size_t>(args.rope_dim));
  for (int64_t t = 0; t < n_tokens; ++t) {
    float theta = float(positions[t]);
    for (int64_t i = 0; i < half; ++i) {
      const float ff = args.freq_factors ? args.freq_factors[i] : 1.0f;
      const float extrapolated = theta / ff;
      float angle = args.position_scale * extrapolated, mscale = args.mscale;
      if (args.ext_factor != 0.0f) {
        const float mix = yarn_ramp(args.corr_low, args.corr_high, i) * args.ext_factor;
        angle = angle * (1 - mix) + extrapolated * mix;
        mscale *= 1.0f + 0.1f * std::log(1.0f / args.position_scale);
      }
      cos_sin[size_t(2 * i)] = std::cos(angle) * mscale;
      cos_sin[size_t(2 * i + 1)] = std::sin(angle) * mscale;
      theta *= args.theta_scale;
    }
    for (int64_t h = 0; h < args.n_heads; ++h) {
      float* head = x + (t * args.n_heads + h) * args.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float c = cos_sin[size_t(2 * i)], s = cos_sin[size_t(2 * i + 1)];
        float* a = args.neox ? head + i : head + 2 * i;
        float* b = args.neox ? head + i + half : head + 2 * i + 1;
        const float x0 = *a, x1 = *b;
        *a = x0 * c - x1 * s;
        *b = x0 * s + x1 * c;
      }
    }
  }
}

}  // namespace ridge::ref
