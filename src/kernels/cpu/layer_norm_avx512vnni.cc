#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/layer_norm.h"

namespace ridge::cpu {
namespace {

__mmask16 tail_mask(int64_t i, int64_t n) { return i + 16 <= n ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1); }

}  // namespace

void add_bias_rows_avx512(float* y, const float* bias, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = tail_mask(i, n);
      float* p = y + r * n + i;
      _mm512_mask_storeu_ps(p, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, p), _mm512_maskz_loadu_ps(m, bias + i)));
    }
}

void add_layer_norm_avx512(float* x, const float* y, const float* y_bias, const float* weight, const float* bias,
                           int64_t n_rows, int64_t n, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    const float* yr = y + r * n;
    // The sums in double lanes: the mean of a long row stays exact to f32's precision.
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = tail_mask(i, n);
      __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, xr + i), _mm512_maskz_loadu_ps(m, yr + i));
      if (y_bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, y_bias + i));
      _mm512_mask_storeu_ps(xr + i, m, v);
      s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
      s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    const float mean = float(_mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) / double(n));
    const __m512 vmean = _mm512_set1_ps(mean);
    __m512d q0 = _mm512_setzero_pd(), q1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = tail_mask(i, n);
      const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, xr + i), vmean);
      const __m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(d));
      const __m512d d1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)));
      q0 = _mm512_fmadd_pd(d0, d0, q0);
      q1 = _mm512_fmadd_pd(d1, d1, q1);
    }
    const float scale = float(1.0 / std::sqrt(_mm512_reduce_add_pd(_mm512_add_pd(q0, q1)) / double(n) + double(eps)));
    const __m512 vscale = _mm512_set1_ps(scale);
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = tail_mask(i, n);
      const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, xr + i), vmean), vscale);
      const __m512 out = _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, weight + i), _mm512_maskz_loadu_ps(m, bias + i));
      _mm512_mask_storeu_ps(xr + i, m, out);
    }
  }
}

}  // namespace ridge::cpu
