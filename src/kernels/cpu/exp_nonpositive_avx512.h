#pragma once
// exp_nonpositive (exp_nonpositive.h) on sixteen lanes, the scalar function's bits in every lane:
// the same operations in the same order, nothing fused. Include only from AVX-512 files
// compiled with fp-contract=off.
#include <immintrin.h>

#include "kernels/cpu/exp_nonpositive.h"

namespace ridge::cpu {

inline __m512 exp_nonpositive16(__m512 x) {
  using namespace exp_constants;
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kMin), _CMP_GT_OQ);
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(kLn2Hi)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(kLn2Lo)));
  __m512 y = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(kP0), r), _mm512_set1_ps(kP1));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP2));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP3));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP4));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP5));
  y = _mm512_add_ps(_mm512_mul_ps(y, _mm512_mul_ps(r, r)), r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(live, y, _mm512_castsi512_ps(bits));
}

}  // namespace ridge::cpu
