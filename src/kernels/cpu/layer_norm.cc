#include "kernels/cpu/layer_norm.h"

#include <cmath>

#include "kernels/cpu/isa.h"

namespace ridge::cpu {

void add_bias_rows_scalar(float* y, const float* bias, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t i = 0; i < n; ++i) y[r * n + i] += bias[i];
}

void add_layer_norm_scalar(float* x, const float* y, const float* y_bias, const float* weight, const float* bias,
                           int64_t n_rows, int64_t n, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    const float* yr = y + r * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      xr[i] = xr[i] + yr[i] + (y_bias ? y_bias[i] : 0.0f);
      sum += xr[i];
    }
    const float mean = float(sum / double(n));
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sq += double(xr[i] - mean) * double(xr[i] - mean);
    const float scale = float(1.0 / std::sqrt(sq / double(n) + double(eps)));
    for (int64_t i = 0; i < n; ++i) xr[i] = (xr[i] - mean) * scale * weight[i] + bias[i];
  }
}

void add_bias_rows(float* y, const float* bias, int64_t n_rows, int64_t n) {
  if (active_isa() == Isa::Avx512Vnni) return add_bias_rows_avx512(y, bias, n_rows, n);
  add_bias_rows_scalar(y, bias, n_rows, n);
}

void add_layer_norm(float* x, const float* y, const float* y_bias, const float* weight, const float* bias, int64_t n_rows,
                    int64_t n, float eps) {
  if (active_isa() == Isa::Avx512Vnni) return add_layer_norm_avx512(x, y, y_bias, weight, bias, n_rows, n, eps);
  add_layer_norm_scalar(x, y, y_bias, weight, bias, n_rows, n, eps);
}

}  // namespace ridge::cpu
