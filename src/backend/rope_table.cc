#include "backend/rope_table.h"

#include <cmath>

namespace ridge {

std::vector<float> rope_cos_sin_table(const ref::RopeArgs& args, int64_t n_positions) {
  const int64_t half = args.rope_dim / 2;
  std::vector<float> table(size_t(n_positions * half * 2));
  for (int64_t p = 0; p < n_positions; ++p) {
    float theta = float(p);
    for (int64_t i = 0; i < half; ++i) {
      const float ff = args.freq_factors ? args.freq_factors[i] : 1.0f;
      const float angle = args.position_scale * (theta / ff);
      table[size_t((p * half + i) * 2)] = std::cos(angle);
      table[size_t((p * half + i) * 2 + 1)] = std::sin(angle);
      theta *= args.theta_scale;
    }
  }
  return table;
}

void rope_from_table(const std::vector<float>& table, const ref::RopeArgs& args, const int32_t* positions,
                     int64_t n_tokens, float* x) {
  const int64_t half = args.rope_dim / 2;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < args.n_heads; ++h) {
      float* head = x + (t * args.n_heads + h) * args.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float c = table[size_t((positions[t] * half + i) * 2)], s = table[size_t((positions[t] * half + i) * 2 + 1)];
        float* a = args.neox ? head + i : head + 2 * i;
        float* b = args.neox ? head + i + half : head + 2 * i + 1;
        const float x0 = *a, x1 = *b;
        *a = x0 * c - x1 * s;
        *b = x0 * s + x1 * c;
      }
    }
}

}  // namespace ridge
