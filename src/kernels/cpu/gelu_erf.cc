#include "kernels/cpu/gelu_erf.h"

#include <cmath>

#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

void gelu_erf_scalar(float* x, int64_t n) {
  using namespace gelu_constants;
  for (int64_t i = 0; i < n; ++i) {
    const float z = std::fabs(x[i]) * kInvSqrt2;
    const float t = 1.0f / (1.0f + kP * z);
    const float poly = ((((kA5 * t + kA4) * t + kA3) * t + kA2) * t + kA1) * t;
    const float erf_abs = 1.0f - poly * exp_nonpositive(-(z * z));
    const float erf = x[i] < 0.0f ? -erf_abs : erf_abs;
    x[i] = 0.5f * x[i] * (1.0f + erf);
  }
}

void gelu_erf(float* x, int64_t n) {
  if (active_isa() == Isa::Avx512Vnni) return gelu_erf_avx512(x, n);
  gelu_erf_scalar(x, n);
}

}  // namespace ridge::cpu
