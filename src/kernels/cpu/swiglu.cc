#include "kernels/cpu/swiglu.h"

#include <cmath>

#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"
#include "kernels/ref/activation.h"

namespace ridge::cpu {


void swiglu_scalar(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float e = exp_nonpositive(-std::fabs(g));
    const float numerator = g >= 0.0f ? g : g * e;
    gate[i] = numerator / (1.0f + e) * up[i];
  }
}

void swiglu(float* gate, const float* up, int64_t n) {
  static const Isa isa = active_isa();
  if (isa == Isa::Avx512Vnni) return swiglu_avx512(gate, up, n);
  if (isa != Isa::Scalar) return swiglu_avx2(gate, up, n);
  // Without vectors the library's expf is the faster scalar exponential (about 2x swiglu_scalar);
  // the fused prologue and the unfused FFN both come here, so they still agree.
  ref::swiglu(gate, up, n);
}

}  // namespace ridge::cpu
