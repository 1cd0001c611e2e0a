// Integer dot kernels for AVX2 + FMA + F16C (compiled with those flags only).
#define RIDGE_QDOT_FN quant_dot_avx2_narrow
#define RIDGE_QDOT_NS avx2_impl
#define RIDGE_QDOT_VNNI 0
#include "kernels/cpu/quant_dot_simd.h"

namespace ridge::cpu {

float dot_f32_avx2(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  float sum = avx2_impl::hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void quant_dot_avx2(const QuantDotTask& task) { quant_dot_narrow_and_wide(task, quant_dot_avx2_narrow, k_dot_tiles_avx2); }

}  // namespace ridge::cpu
