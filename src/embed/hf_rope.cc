#include "embed/hf_rope.h"

#include <cmath>

namespace ridge {

HfRope::HfRope(float base, int64_t head_dim, int64_t n_positions)
    : head_dim_(head_dim), half_(head_dim / 2), cos_(size_t(n_positions * half_)), sin_(cos_.size()) {
  std::vector<float> inv_freq(static_cast<size_t>(half_));
  for (int64_t i = 0; i < half_; ++i) inv_freq[size_t(i)] = 1.0f / std::pow(base, float(2 * i) / float(head_dim));
  for (int64_t p = 0; p < n_positions; ++p)
    for (int64_t i = 0; i < half_; ++i) {
      const float angle = inv_freq[size_t(i)] * float(p);
      cos_[size_t(p * half_ + i)] = float(std::cos(double(angle)));
      sin_[size_t(p * half_ + i)] = float(std::sin(double(angle)));
    }
}

void HfRope::apply(float* x, int64_t n_heads, int64_t position) const {
  const float* c = cos_.data() + position * half_;
  const float* s = sin_.data() + position * half_;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* x1 = x + h * head_dim_;
    float* x2 = x1 + half_;
    for (int64_t i = 0; i < half_; ++i) {
      const float a = x1[i], b = x2[i];
      const float rotated1 = a * c[i] - b * s[i];
      const float rotated2 = b * c[i] + a * s[i];
      x1[i] = rotated1;
      x2[i] = rotated2;
    }
  }
}

}  // namespace ridge
