#include "kernels/ref/norm.h"

#include <cmath>

namespace ridge::ref {

void rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* yr = out + r * n;
    // f32 squares summed in double, then f32 from the mean on: llama.cpp's order, bit for bit.
    double sum_sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sum_sq += double(xr[i] * xr[i]);
    const float mean = float(sum_sq / double(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] * scale) * weight[i];
  }
}

}  // namespace ridge::ref
