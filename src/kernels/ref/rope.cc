#include "kernels/ref/rope.h"

#include <cmath>

namespace ridge::ref {

void rope(const RopeArgs& args, const int32_t* positions, int64_t n_tokens, float* x) {
  const int64_t half = args.rope_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float pos = float(positions[t]) * args.position_scale;
    for (int64_t h = 0; h < args.n_heads; ++h) {
      float* head = x + (t * args.n_heads + h) * args.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float angle = pos * args.inv_freq[i];
        const float c = std::cos(angle), s = std::sin(angle);
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
