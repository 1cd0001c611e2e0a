// exp_sum on AVX-512: sixteen exponentials per step, widened to double into the sixteen partial sums.
#include <immintrin.h>

#include <cstdint>
#include <limits>

#include "kernels/cpu/exp_nonpositive_avx512.h"

namespace ridge::cpu {

double exp_sum_avx512(const float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();  // lanes 0-7 and 8-15
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    const __m512 e = exp_nonpositive16(_mm512_sub_ps(_mm512_mask_loadu_ps(minus_inf, live, x + i), s));
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  alignas(64) double lanes[16];
  _mm512_store_pd(lanes, low);
  _mm512_store_pd(lanes + 8, high);
  double sum = 0.0;
  for (double lane : lanes) sum += lane;
  return sum;
}

}  // namespace ridge::cpu
