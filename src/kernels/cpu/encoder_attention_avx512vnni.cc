// encoder_attention_rows on AVX-512, over the keys transposed into rows of 16-aligned width (key j
// in lane j mod 16; padding keys score nothing): blocks of up to eight queries, their scores against
// sixteen keys at a time in registers over the block's keys, the softmax with exp_nonpositive16
// (keys outside a query's window masked to 0), and P·V with the block's output rows held in
// registers while the values stream past.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/encoder_attention.h"
#include "kernels/cpu/exp_nonpositive_avx512.h"

namespace ridge::cpu {
namespace {

constexpr int kRows = 8;

int64_t padded(int64_t n) { return (n + 15) / 16 * 16; }

// The transposed keys: column j is key j, np columns.
struct Keys {
  const float* kt;
  int64_t np;
};

// scores[r * np + j] = scale · q_r · k_j for the block's R queries and the columns [jb, je).
template <int R>
void block_scores(const float* const* q, const Keys& keys, int64_t jb, int64_t je, int64_t d, float scale,
                  float* scores) {
  const int64_t np = keys.np;
  for (int64_t j = jb; j < je; j += 16) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < d; ++c) {
      const __m512 k = _mm512_loadu_ps(keys.kt + c * np + j);
      for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[r][c]), k, acc[r]);
    }
    for (int r = 0; r < R; ++r) _mm512_storeu_ps(scores + r * np + j, _mm512_mul_ps(acc[r], _mm512_set1_ps(scale)));
  }
}

// Lanes of the columns [j, j + 16) that hold keys in [lo, hi).
__mmask16 live_lanes(int64_t j, int64_t lo, int64_t hi) {
  const __m512i index = _mm512_add_epi32(_mm512_set1_epi32(int32_t(j)),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  return _mm512_cmpge_epi32_mask(index, _mm512_set1_epi32(int32_t(lo))) &
         _mm512_cmplt_epi32_mask(index, _mm512_set1_epi32(int32_t(hi)));
}

// Row r's scores over [jb, je) become its softmax over the keys its query sees, the rest 0.
void softmax_rows(const EncoderAttention& a, int64_t i0, int rows, const Keys& keys, int64_t jb, int64_t je,
                  float* scores) {
  for (int r = 0; r < rows; ++r) {
    float* s = scores + r * keys.np;
    const KeyRange range = encoder_attention_keys(a, i0 + r);
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t j = jb; j < je; j += 16)
      m = _mm512_mask_max_ps(m, live_lanes(j, range.lo, range.hi), m, _mm512_loadu_ps(s + j));
    const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = jb; j < je; j += 16) {
      const __mmask16 live = live_lanes(j, range.lo, range.hi);
      const __m512 e = _mm512_maskz_mov_ps(live, exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(s + j), max)));
      _mm512_storeu_ps(s + j, e);
      sum = _mm512_add_ps(sum, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (int64_t j = jb; j < je; j += 16) _mm512_storeu_ps(s + j, _mm512_mul_ps(_mm512_loadu_ps(s + j), inv));
  }
}

// out_r[c0 .. c0 + 32) = Σ_j p_r[j] · v_j[c0 ..] over the columns [j0, j1), two registers of
// columns per row (masked at the end).
template <int R>
void block_values(const float* p, const Keys& keys, int64_t j0, int64_t j1, const float* v, int64_t stride, int64_t d,
                  float* const* out) {
  for (int64_t c0 = 0; c0 < d; c0 += 32) {
    const __mmask16 m0 = c0 + 16 <= d ? __mmask16(0xffff) : __mmask16((1u << (d - c0)) - 1);
    const __mmask16 m1 = c0 + 32 <= d ? __mmask16(0xffff) : __mmask16(c0 + 16 < d ? (1u << (d - c0 - 16)) - 1 : 0);
    __m512 a0[R], a1[R];
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    for (int64_t j = j0; j < j1; ++j) {
      const float* vj = v + j * stride + c0;
      const __m512 v0 = _mm512_maskz_loadu_ps(m0, vj), v1 = _mm512_maskz_loadu_ps(m1, vj + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 pr = _mm512_set1_ps(p[r * keys.np + j]);
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
void query_block(const EncoderAttention& a, int64_t head, int64_t i0, const Keys& keys, float* scores) {
  const int64_t d = a.head_dim, kv_stride = a.kv_stride > 0 ? a.kv_stride : a.stride;
  const float* q[R];
  float* out[R];
  for (int r = 0; r < R; ++r) {
    q[r] = a.q + (i0 + r) * a.stride + head * d;
    out[r] = a.out + (i0 + r) * a.stride + head * d;
  }
  // The block's keys: from its first query's first to its last query's last.
  const int64_t j0 = encoder_attention_keys(a, i0).lo, j1 = encoder_attention_keys(a, i0 + R - 1).hi;
  const int64_t jb = j0 / 16 * 16, je = padded(j1);
  block_scores<R>(q, keys, jb, je, d, a.scale, scores);
  softmax_rows(a, i0, R, keys, jb, je, scores);
  block_values<R>(scores, keys, j0, j1, a.v + head / a.n_group * d, kv_stride, d, out);
}

}  // namespace

int64_t encoder_attention_scratch_floats_avx512(int64_t n_tokens, int64_t head_dim) {
  return padded(n_tokens) * head_dim + kRows * padded(n_tokens);
}

void encoder_attention_rows_avx512(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end,
                                   float* scratch) {
  if (begin >= end) return;
  const int64_t np = encoder_attention_kt_width(a.n_tokens);
  const float* kt = a.kt;  // (d, np)
  if (!kt) {
    encoder_attention_transpose_keys(a, head / a.n_group, scratch);
    kt = scratch;
  }
  const Keys keys{kt, np};
  float* scores = scratch + np * a.head_dim;  // (kRows, np)
  int64_t i = begin;
  for (; i + kRows <= end; i += kRows) query_block<kRows>(a, head, i, keys, scores);
  switch (end - i) {
    case 7: query_block<7>(a, head, i, keys, scores); break;
    case 6: query_block<6>(a, head, i, keys, scores); break;
    case 5: query_block<5>(a, head, i, keys, scores); break;
    case 4: query_block<4>(a, head, i, keys, scores); break;
    case 3: query_block<3>(a, head, i, keys, scores); break;
    case 2: query_block<2>(a, head, i, keys, scores); break;
    case 1: query_block<1>(a, head, i, keys, scores); break;
    default: break;
  }
}

}  // namespace ridge::cpu
