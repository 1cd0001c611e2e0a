// The f16-cache attention of kernels/cpu/attention.cc with 512-bit f16 conversions: sixteen
// elements of a K or V row per instruction. Same roundings (q and the probabilities to f16), with
// 16-lane partial sums in place of one running sum; each (token, head) runs the same sequence
// whatever the batch, so results stay batch-independent.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention_kernels.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace ridge::cpu {

void attend_f16_avx512(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                       const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head) {
  constexpr int64_t kMaxHeadDim = 512;
  const int64_t dim = args.head_dim, n_vec = dim / 16;
  const int64_t kv_head = head / (args.n_heads / args.n_kv_heads);
  const int64_t head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);
  const int64_t n_seen = int64_t(position) + 1;
  __m512 q[kMaxHeadDim / 16];
  for (int64_t i = 0; i < n_vec; ++i)  // q rounded to f16, as an f16 kernel sees it
    q[i] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(q_head + 16 * i), _MM_FROUND_TO_NEAREST_INT));

  float max_score = -INFINITY;
  for (int64_t j = 0; j < n_seen; ++j) {
    const auto* k = reinterpret_cast<const __m256i*>(kv.key_row(table[size_t(j / kv.block_size)], j % kv.block_size) + head_offset);
    __m512 acc = _mm512_mul_ps(q[0], _mm512_cvtph_ps(_mm256_loadu_si256(k)));
    for (int64_t i = 1; i < n_vec; ++i) acc = _mm512_fmadd_ps(q[i], _mm512_cvtph_ps(_mm256_loadu_si256(k + i)), acc);
    scores[j] = _mm512_reduce_add_ps(acc) * args.scale;
    max_score = std::max(max_score, scores[j]);
  }
  double denom = 0.0;  // summed in double and applied as one reciprocal, as llama.cpp's softmax does
  for (int64_t j = 0; j < n_seen; ++j) denom += double(scores[j] = std::exp(scores[j] - max_score));
  const float inv_denom = float(1.0 / denom);

  __m512 out[kMaxHeadDim / 16];
  for (int64_t i = 0; i < n_vec; ++i) out[i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_seen; ++j) {
    const auto* v = reinterpret_cast<const __m256i*>(kv.value_row(table[size_t(j / kv.block_size)], j % kv.block_size) + head_offset);
    const __m512 p = _mm512_set1_ps(f16_round(scores[j] * inv_denom));
    for (int64_t i = 0; i < n_vec; ++i) out[i] = _mm512_fmadd_ps(p, _mm512_cvtph_ps(_mm256_loadu_si256(v + i)), out[i]);
  }
  for (int64_t i = 0; i < n_vec; ++i) _mm512_storeu_ps(out_head + 16 * i, out[i]);
}

}  // namespace ridge::cpu
