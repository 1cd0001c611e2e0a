// encoder_attention_head on AVX-512: the keys transposed once per head into rows of 16-aligned
// width (padding keys score -inf), then blocks of up to eight queries: their scores against sixteen
// keys at a time in registers, the softmax with exp_nonpositive16, and P·V with the block's output
// rows held in registers while the values stream past.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/encoder_attention.h"
#include "kernels/cpu/exp_nonpositive_avx512.h"

namespace ridge::cpu {
namespace {

constexpr int kRows = 8;

int64_t padded(int64_t n) { return (n + 15) / 16 * 16; }

// scores[r * np + j] = scale · q_r · k_j for the block's R queries and every key.
template <int R>
void block_scores(const float* const* q, const float* kt, int64_t np, int64_t d, float scale, float* scores) {
  for (int64_t j = 0; j < np; j += 16) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < d; ++c) {
      const __m512 k = _mm512_loadu_ps(kt + c * np + j);
      for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[r][c]), k, acc[r]);
    }
    for (int r = 0; r < R; ++r) _mm512_storeu_ps(scores + r * np + j, _mm512_mul_ps(acc[r], _mm512_set1_ps(scale)));
  }
}

// Each row of scores (n live keys of np) becomes its softmax, padding keys 0.
void softmax_rows(float* scores, int rows, int64_t n, int64_t np) {
  for (int r = 0; r < rows; ++r) {
    float* s = scores + r * np;
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < np; j += 16) {
      const __mmask16 live = j + 16 <= n ? __mmask16(0xffff) : __mmask16((1u << std::max<int64_t>(0, n - j)) - 1);
      m = _mm512_mask_max_ps(m, live, m, _mm512_loadu_ps(s + j));
    }
    const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < np; j += 16) {
      const __mmask16 live = j + 16 <= n ? __mmask16(0xffff) : __mmask16((1u << std::max<int64_t>(0, n - j)) - 1);
      const __m512 e = _mm512_maskz_mov_ps(live, exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(s + j), max)));
      _mm512_storeu_ps(s + j, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (int64_t j = 0; j < np; j += 16) _mm512_storeu_ps(s + j, _mm512_mul_ps(_mm512_loadu_ps(s + j), inv));
  }
}

// out_r[c0 .. c0 + 32) = Σ_j p_r[j] · v_j[c0 ..], two registers of columns per row (masked at the end).
template <int R>
void block_values(const float* p, int64_t np, const float* v, int64_t stride, int64_t n, int64_t d, float* const* out) {
  for (int64_t c0 = 0; c0 < d; c0 += 32) {
    const __mmask16 m0 = c0 + 16 <= d ? __mmask16(0xffff) : __mmask16((1u << (d - c0)) - 1);
    const __mmask16 m1 = c0 + 32 <= d ? __mmask16(0xffff) : __mmask16(c0 + 16 < d ? (1u << (d - c0 - 16)) - 1 : 0);
    __m512 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
      const float* vj = v + j * stride + c0;
      const __m512 v0 = _mm512_maskz_loadu_ps(m0, vj), v1 = _mm512_maskz_loadu_ps(m1, vj + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 pr = _mm512_set1_ps(p[r * np + j]);
        a0[r] = _mm512_fmadd_ps(pr, v0, a0[r]);
        a1[r] = _mm512_fmadd_ps(pr, v1, a1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      _mm512_mask_storeu_ps(out[r] + c0, m0, a0[r]);
      _mm512_mask_storeu_ps(out[r] + c0 + 16, m1, a1[r]);
    }
  }
}

template <int R>
void query_block(const EncoderAttention& a, int64_t head, int64_t i0, const float* kt, int64_t np, float* scores) {
  const int64_t d = a.head_dim;
  const float* q[R];
  float* out[R];
  for (int r = 0; r < R; ++r) {
    q[r] = a.q + (i0 + r) * a.stride + head * d;
    out[r] = a.out + (i0 + r) * a.stride + head * d;
  }
  block_scores<R>(q, kt, np, d, a.scale, scores);
  softmax_rows(scores, R, a.n_tokens, np);
  block_values<R>(scores, np, a.v + head * d, a.stride, a.n_tokens, d, out);
}

}  // namespace

int64_t encoder_attention_scratch_floats_avx512(int64_t n_tokens, int64_t head_dim) {
  return padded(n_tokens) * head_dim + kRows * padded(n_tokens);
}

void encoder_attention_head_avx512(const EncoderAttention& a, int64_t head, float* scratch) {
  const int64_t n = a.n_tokens, d = a.head_dim, np = padded(n);
  float* kt = scratch;  // (d, np), zeros past n
  float* scores = kt + np * d;
  for (int64_t c = 0; c < d; ++c) std::fill(kt + c * np + n, kt + (c + 1) * np, 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    const float* kj = a.k + j * a.stride + head * d;
    for (int64_t c = 0; c < d; ++c) kt[c * np + j] = kj[c];
  }
  int64_t i = 0;
  for (; i + kRows <= n; i += kRows) query_block<kRows>(a, head, i, kt, np, scores);
  switch (n - i) {
    case 7: query_block<7>(a, head, i, kt, np, scores); break;
    case 6: query_block<6>(a, head, i, kt, np, scores); break;
    case 5: query_block<5>(a, head, i, kt, np, scores); break;
    case 4: query_block<4>(a, head, i, kt, np, scores); break;
    case 3: query_block<3>(a, head, i, kt, np, scores); break;
    case 2: query_block<2>(a, head, i, kt, np, scores); break;
    case 1: query_block<1>(a, head, i, kt, np, scores); break;
    default: break;
  }
}

}  // namespace ridge::cpu
