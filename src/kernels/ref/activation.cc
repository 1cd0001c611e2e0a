#include "kernels/ref/activation.h"

#include <algorithm>
#include <cmath>

namespace ridge::ref {

void swiglu(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCoef * g * g))) * up[i];
  }
}

void softmax(float* x, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r, x += n) {
    const float max = *std::max_element(x, x + n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] = std::exp(x[i] - max));
    const float inv = float(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  }
}

void softcap(float* x, int64_t n, float c) {
  const float inv = 1.0f / c;
  for (int64_t i = 0; i < n; ++i) x[i] = c * std::tanh(x[i] * inv);
}

void gelu_erf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

}  // namespace ridge::ref
