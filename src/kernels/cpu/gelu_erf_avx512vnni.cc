#include <immintrin.h>

#include "kernels/cpu/exp_nonpositive_avx512.h"
#include "kernels/cpu/gelu_erf.h"

namespace ridge::cpu {
namespace {

// Bitwise float operations through the integer unit (AVX-512F has no float and/or/xor without DQ).
__m512 and_ps(__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
__m512 andnot_ps(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
__m512 or_ps(__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
__m512 xor_ps(__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }

}  // namespace

void gelu_erf_avx512(float* x, int64_t n) {
  using namespace gelu_constants;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  int64_t i = 0;
  const auto step = [&](__mmask16 mask) {
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    const __m512 z = _mm512_mul_ps(andnot_ps(sign, v), _mm512_set1_ps(kInvSqrt2));
    const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(_mm512_set1_ps(kP), z)));
    __m512 poly = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(kA5), t), _mm512_set1_ps(kA4));
    poly = _mm512_add_ps(_mm512_mul_ps(poly, t), _mm512_set1_ps(kA3));
    poly = _mm512_add_ps(_mm512_mul_ps(poly, t), _mm512_set1_ps(kA2));
    poly = _mm512_add_ps(_mm512_mul_ps(poly, t), _mm512_set1_ps(kA1));
    poly = _mm512_mul_ps(poly, t);
    const __m512 e = exp_nonpositive16(xor_ps(_mm512_mul_ps(z, z), sign));
    const __m512 erf_abs = _mm512_sub_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(poly, e));
    const __m512 erf = or_ps(erf_abs, and_ps(v, sign));  // the sign of x
    const __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
    _mm512_mask_storeu_ps(x + i, mask, y);
  };
  for (; i + 16 <= n; i += 16) step(0xffff);
  if (i < n) step(__mmask16((1u << (n - i)) - 1));
}

}  // namespace ridge::cpu
