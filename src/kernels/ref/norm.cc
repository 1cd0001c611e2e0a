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

void layer_norm(const float* x, const float* weight, const float* bias, int64_t n_rows, int64_t n, float eps, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* yr = out + r * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(xr[i]);
    const double mean = sum / double(n);
    double sum_sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sum_sq += (double(xr[i]) - mean) * (double(xr[i]) - mean);
    const float scale = float(1.0 / std::sqrt(sum_sq / double(n) + double(eps)));
    const float m = float(mean);
    for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * scale * weight[i] + bias[i];
  }
}

}  // namespace ridge::ref
