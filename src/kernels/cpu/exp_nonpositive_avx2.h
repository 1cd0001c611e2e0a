#pragma once
// exp_nonpositive (exp_nonpositive.h) on eight lanes, the scalar function's bits in every lane:
// the same operations in the same order, nothing fused. Include only from AVX2 files compiled
// with fp-contract=off.
#include <immintrin.h>

#include "kernels/cpu/exp_nonpositive.h"

namespace ridge::cpu {

inline __m256 exp_nonpositive8(__m256 x) {
  using namespace exp_constants;
  const __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(kMin), _CMP_GT_OQ);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Hi)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Lo)));
  __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(kP0), r), _mm256_set1_ps(kP1));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP2));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP3));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP4));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP5));
  y = _mm256_add_ps(_mm256_mul_ps(y, _mm256_mul_ps(r, r)), r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(live, _mm256_mul_ps(y, _mm256_castsi256_ps(bits)));  // 0 below kMin, for -inf and NaN
}

}  // namespace ridge::cpu
