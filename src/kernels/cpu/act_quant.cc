#include "kernels/cpu/act_quant.h"

#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

void quantize_activations_scalar(const float* x, int64_t n, ActBlock* out) {
  for (int64_t b = 0; b < n / kActBlock; ++b, x += kActBlock) {
    float amax = 0.0f;
    for (int i = 0; i < kActBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < kActBlock; ++i) {
      const int q = int(std::nearbyint(x[i] * inv));  // default rounding mode: half to even
      out[b].q[i] = int8_t(q);
      sum += q;
    }
    out[b].sum = sum;
    out[b].d = round_to_f16(d);
    out[b].s = round_to_f16(d * float(sum));
  }
}

void quantize_activations(const float* x, int64_t n, ActBlock* out) {
  static const Isa isa = active_isa();
  if (isa == Isa::Avx512Vnni) return quantize_activations_avx512(x, n, out);
  if (isa != Isa::Scalar) return quantize_activations_avx2(x, n, out);
  quantize_activations_scalar(x, n, out);
}

}  // namespace ridge::cpu
