#include "kernels/cpu/geglu_tanh.h"

#include <cmath>

#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

void geglu_tanh_scalar(float* gate, const float* up, int64_t n) {
  using namespace geglu_constants;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float z = g * (kTwoSqrt2OverPi + kCubic * (g * g));  // 2u, of g's sign
    const float e = exp_nonpositive(-std::fabs(z));
    const float numerator = g >= 0.0f ? g : g * e;
    gate[i] = numerator / (1.0f + e) * up[i];
  }
}

void geglu_tanh(float* gate, const float* up, int64_t n) {
  static const bool wide = active_isa() == Isa::Avx512Vnni;
  if (wide) return geglu_tanh_avx512(gate, up, n);
  geglu_tanh_scalar(gate, up, n);
}

}  // namespace ridge::cpu
