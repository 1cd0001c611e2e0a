// Activation quantization with AVX-512: the same bits as quantize_activations_scalar (the same f32
// products, and vcvtps2dq rounds half to even like nearbyint in the default rounding mode).
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/cpu/act_quant.h"

namespace ridge::cpu {

void quantize_activations_avx512(const float* x, int64_t n, ActBlock* out) {
  for (int64_t b = 0; b < n / kActBlock; ++b, x += kActBlock) {
    const __m512 lo = _mm512_loadu_ps(x), hi = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi)));
    const float d = amax / 127.0f;
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    const __m512 scale = _mm512_set1_ps(inv);
    const __m512i qlo = _mm512_cvtps_epi32(_mm512_mul_ps(lo, scale));
    const __m512i qhi = _mm512_cvtps_epi32(_mm512_mul_ps(hi, scale));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].q), _mm512_cvtsepi32_epi8(qlo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].q + 16), _mm512_cvtsepi32_epi8(qhi));
    const int32_t sum = _mm512_reduce_add_epi32(_mm512_add_epi32(qlo, qhi));
    out[b].sum = sum;
    // F16C rounds to nearest even, as f32_to_f16 does, in two instructions instead of a branchy routine.
    out[b].d = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    out[b].s = _cvtsh_ss(_cvtss_sh(d * float(sum), _MM_FROUND_TO_NEAREST_INT));
  }
}

}  // namespace ridge::cpu
