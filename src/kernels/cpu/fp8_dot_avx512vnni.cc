// FP8 E4M3 weights against f32 activations on AVX-512 (the decode path of FP8 checkpoints): sixteen
// bytes become sixteen floats of value / 256 in three integer instructions and one conversion (the
// byte sign-extended to 16 bits and shifted into an f16's place: sign on bit 15, exponent and
// mantissa on bits 7-13, bit 14 cleared; an f16 exponent bias of 15 instead of 7 makes the 2^-8),
// dotted with up to four tokens per load. Each (row, token) runs one fixed sequence: per group of
// the checkpoint's scales, two accumulators over steps of 32 (16 at a group's end), then
// total = fma(sum, 256 * scale, total), so a token's result does not depend on its tile.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {
namespace {

inline __m512 load16(const uint8_t* p) {
  const __m256i h = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm512_cvtph_ps(_mm256_and_si256(_mm256_slli_epi16(h, 7), _mm256_set1_epi16(short(0xBFFF))));
}

template <int NT>
void tile(const FloatDotTask& task, int64_t r, int64_t t0) {
  const uint8_t* row = task.w + r * task.row_bytes;
  const int64_t n = task.cols, gc = task.group_scales ? task.group_cols : n, groups = n / gc;
  float total[NT] = {};
  for (int64_t g = 0; g < groups; ++g) {
    __m512 a0[NT], a1[NT];
    for (int t = 0; t < NT; ++t) a0[t] = a1[t] = _mm512_setzero_ps();
    const int64_t end = (g + 1) * gc;
    int64_t i = g * gc;
    for (; i + 32 <= end; i += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(row + i) + 1024, _MM_HINT_T0);
      const __m512 w0 = load16(row + i), w1 = load16(row + i + 16);
      for (int t = 0; t < NT; ++t) {
        const float* x = task.x + (t0 + t) * n + i;
        a0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x), a0[t]);
        a1[t] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + 16), a1[t]);
      }
    }
    if (i < end) {  // a group of 16 (mod 32)
      const __m512 w0 = load16(row + i);
      for (int t = 0; t < NT; ++t) a0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(task.x + (t0 + t) * n + i), a0[t]);
    }
    const float s = 256.0f * (task.group_scales ? task.group_scales[r * groups + g] : 1.0f);
    for (int t = 0; t < NT; ++t) total[t] = std::fma(_mm512_reduce_add_ps(_mm512_add_ps(a0[t], a1[t])), s, total[t]);
  }
  for (int t = 0; t < NT; ++t) task.y[(t0 + t) * task.y_stride + r] = total[t];
}

}  // namespace

void fp8_dot_avx512(const FloatDotTask& task) {
  if (task.cols % 16 != 0 || (task.group_scales && (task.group_cols % 16 != 0 || task.cols % task.group_cols != 0)))
    fail("F8_E4M3 rows of {} values in groups of {}: both must be multiples of 16", task.cols, task.group_cols);
  constexpr int64_t kTokenChunk = 16;  // a chunk of inputs stays in L1/L2 while rows stream by
  for (int64_t c0 = 0; c0 < task.n_tokens; c0 += kTokenChunk) {
    const int64_t c_end = std::min(task.n_tokens, c0 + kTokenChunk);
    for (int64_t r = task.row_begin; r < task.row_end; ++r) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile<4>(task, r, t);
      for (; t < c_end; ++t) tile<1>(task, r, t);
    }
  }
}

}  // namespace ridge::cpu
