// geglu_tanh on sixteen lanes (geglu_tanh.h): geglu_tanh_scalar's operations in its order, the tail masked.
#include <immintrin.h>

// GCC 12 warns that the unmasked intrinsics' _mm512_undefined_ps placeholders are uninitialized
// once exp_nonpositive16 is inlined into a loop (a false positive: every lane is written).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/cpu/exp_nonpositive_avx512.h"
#include "kernels/cpu/geglu_tanh.h"

namespace ridge::cpu {

void geglu_tanh_avx512(float* gate, const float* up, int64_t n) {
  using namespace geglu_constants;
  const __m512i sign = _mm512_set1_epi32(int32_t(0x80000000u));
  const __m512 one = _mm512_set1_ps(1.0f), linear = _mm512_set1_ps(kTwoSqrt2OverPi), cubic = _mm512_set1_ps(kCubic);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(live, gate + i);
    const __m512 z = _mm512_mul_ps(g, _mm512_add_ps(linear, _mm512_mul_ps(cubic, _mm512_mul_ps(g, g))));
    const __m512 e = exp_nonpositive16(_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(z), sign)));  // e^-|z|
    const __mmask16 negative = _mm512_cmp_ps_mask(g, _mm512_setzero_ps(), _CMP_NGE_UQ);
    const __m512 numerator = _mm512_mask_mul_ps(g, negative, g, e);
    const __m512 y =
        _mm512_mul_ps(_mm512_div_ps(numerator, _mm512_add_ps(one, e)), _mm512_maskz_loadu_ps(live, up + i));
    _mm512_mask_storeu_ps(gate + i, live, y);
  }
}

}  // namespace ridge::cpu
