// Activation quantization with AVX2: the same bits as quantize_activations_scalar (the same f32
// products, vcvtps2dq rounds half to even like nearbyint in the default rounding mode, and vmaxps
// with the running maximum second ignores a NaN as fmax does).
#include <immintrin.h>

#include "kernels/cpu/act_quant.h"

namespace ridge::cpu {

void quantize_activations_avx2(const float* x, int64_t n, ActBlock* out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undo the packs' lane interleave
  for (int64_t b = 0; b < n / kActBlock; ++b, x += kActBlock) {
    __m256 v[4];
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(x + 8 * i);
      m = _mm256_max_ps(_mm256_and_ps(v[i], abs_mask), m);
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float amax = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    const float d = amax / 127.0f;
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    const __m256 scale = _mm256_set1_ps(inv);
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], scale));
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[b].q), _mm256_permutevar8x32_epi32(bytes, order));
    const __m256i s8 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
    const int32_t sum = _mm_cvtsi128_si32(s4);
    out[b].sum = sum;
    out[b].d = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    out[b].s = _cvtsh_ss(_cvtss_sh(d * float(sum), _MM_FROUND_TO_NEAREST_INT));
  }
}

}  // namespace ridge::cpu
