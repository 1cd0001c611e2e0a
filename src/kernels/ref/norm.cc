#include "kernels/ref/norm.h"

#include <cmath>

namespace ridge::ref {

void rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n;
    float* yr = out + r * n;
    double sum_sq = 0.0;  // double: the mean of squares is the one reduction that loses precision at large n
    for (int64_t i = 0; i < n; ++i) sum_sq += double(xr[i]) * xr[i];
    const float scale = float(1.0 / std::sqrt(sum_sq / double(n) + double(eps)));
    for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale * weight[i];
  }
}

}  // namespace ridge::ref
