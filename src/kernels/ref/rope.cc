#include "kernels/ref/rope.h"

#include <cmath>
#include <vector>

namespace ridge::ref {

void rope(const RopeArgs& args, const int32_t* positions, int64_t n_tokens, float* x) {
  const int64_t half = args.rope_dim / 2;
  std::vector<float> cos_sin(static_cast<size_t>(args.rope_dim));
  for (int64_t t = 0; t < n_tokens; ++t) {
    float theta = float(positions[t]);
    for (int64_t i = 0; i < half; ++i) {
      const float ff = args.freq_factors ? args.freq_factors[i] : 1.0f;
      const float angle = args.position_scale * (theta / ff);
      cos_sin[size_t(2 * i)] = std::cos(angle);
      cos_sin[size_t(2 * i + 1)] = std::sin(angle);
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
