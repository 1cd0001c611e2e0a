// swiglu on eight lanes (swiglu.h): swiglu_scalar's operations in its order, the tail scalar.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/exp_nonpositive_avx2.h"

namespace ridge::cpu {

void swiglu_avx2(float* gate, const float* up, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp_nonpositive8(_mm256_or_ps(g, sign));  // e^-|g|
    const __m256 negative = _mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_NGE_UQ);
    const __m256 numerator = _mm256_blendv_ps(g, _mm256_mul_ps(g, e), negative);
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(_mm256_div_ps(numerator, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    const float e = exp_nonpositive(-std::fabs(g));
    const float numerator = g >= 0.0f ? g : g * e;
    gate[i] = numerator / (1.0f + e) * up[i];
  }
}

}  // namespace ridge::cpu
