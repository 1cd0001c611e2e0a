// BF16 weights with AVX-512 BF16: vdpbf16ps multiplies pairs of bf16 weights by pairs of bf16
// activations (rounded to nearest even once per call, in the activation pass) and adds both
// products into f32 lanes, 32 values per instruction. Each (row, token) pair runs the same sequence
// whatever its tile, as in float_dot_avx2.cc.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>

#include "core/fp16.h"
#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {
namespace {

inline float bf16_at(const uint16_t* p, int64_t i) { return bf16_to_f32(p[i]); }

// NR rows x NT tokens: each weight load serves NT tokens, each activation load NR rows.
template <int NR, int NT>
void tile(const Bf16DotTask& task, int64_t r0, int64_t t0) {
  const int64_t n = task.cols;
  const uint16_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = reinterpret_cast<const uint16_t*>(task.w + (r0 + r) * task.row_bytes);
  __m512 a0[NR][NT], a1[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) a0[r][t] = a1[r][t] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512bh w0[NR], w1[NR];
    for (int r = 0; r < NR; ++r) {
      w0[r] = (__m512bh)_mm512_loadu_si512(rows[r] + i);
      w1[r] = (__m512bh)_mm512_loadu_si512(rows[r] + i + 32);
    }
    for (int t = 0; t < NT; ++t) {
      const uint16_t* x = task.x + (t0 + t) * n + i;
      const __m512bh x0 = (__m512bh)_mm512_loadu_si512(x), x1 = (__m512bh)_mm512_loadu_si512(x + 32);
      for (int r = 0; r < NR; ++r) {
        a0[r][t] = _mm512_dpbf16_ps(a0[r][t], w0[r], x0);
        a1[r][t] = _mm512_dpbf16_ps(a1[r][t], w1[r], x1);
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) {
      float sum = _mm512_reduce_add_ps(_mm512_add_ps(a0[r][t], a1[r][t]));
      const uint16_t* x = task.x + (t0 + t) * n;
      for (int64_t j = i; j < n; ++j) sum += bf16_at(rows[r], j) * bf16_at(x, j);
      task.y[(t0 + t) * task.y_stride + r0 + r] = sum;
    }
}

}  // namespace

void to_bf16_avx512(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(out + i, (__m512i)pair);
  }
  for (; i < n; ++i) out[i] = f32_to_bf16(x[i]);
}

void bf16_dot_avx512(const Bf16DotTask& task) {
  constexpr int64_t kTokenChunk = 16;  // a chunk of inputs stays in L1/L2 while rows stream by
  for (int64_t c0 = 0; c0 < task.n_tokens; c0 += kTokenChunk) {
    const int64_t c_end = std::min(task.n_tokens, c0 + kTokenChunk);
    int64_t r = task.row_begin;
    for (; r + 2 <= task.row_end; r += 2) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile<2, 4>(task, r, t);
      for (; t < c_end; ++t) tile<2, 1>(task, r, t);
    }
    for (; r < task.row_end; ++r) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile<1, 4>(task, r, t);
      for (; t < c_end; ++t) tile<1, 1>(task, r, t);
    }
  }
}

}  // namespace ridge::cpu
