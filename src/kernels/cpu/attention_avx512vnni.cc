// The f16-cache attention of kernels/cpu/attention.cc, bit for bit: the same roundings (q and the
// probabilities to f16) and the same order of every sum. Each score is one running sum over the
// head's dimensions (as the scalar kernel, and close to what llama.cpp computes: reordering it
// measurably changes which near-tie greedy tokens flip), while P·V runs sixteen output dimensions
// per instruction, each still summed position by position with a separate multiply and add.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention_kernels.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// The scalar kernel is compiled without FMA: fusing here would round differently.
#pragma GCC optimize("fp-contract=off")

namespace ridge::cpu {

namespace {

// out = Σ_j probs[j] · V_j over NV x 16 dimensions kept in registers, position by position.
template <int NV>
void weigh_values(const KvLayerView& kv, std::span<const BlockId> table, int64_t head_offset, const float* probs,
                  int64_t n_seen, float* out_head) {
  __m512 out[NV];
  for (auto& o : out) o = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_seen; ++j) {
    const auto* v = reinterpret_cast<const __m256i*>(kv.value_row(table[size_t(j / kv.block_size)], j % kv.block_size) + head_offset);
    const __m512 p = _mm512_set1_ps(probs[j]);
    for (int i = 0; i < NV; ++i) out[i] = _mm512_add_ps(out[i], _mm512_mul_ps(p, _mm512_cvtph_ps(_mm256_loadu_si256(v + i))));
  }
  for (int i = 0; i < NV; ++i) _mm512_storeu_ps(out_head + 16 * i, out[i]);
}

}  // namespace

void attend_f16_avx512(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                       const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head) {
  constexpr int64_t kMaxHeadDim = 512;
  const int64_t dim = args.head_dim, n_vec = dim / 16;  // the caller checks dim % 16 == 0 and block_size % 16 == 0
  const int64_t kv_head = head / (args.n_heads / args.n_kv_heads);
  const int64_t head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);
  const int64_t n_seen = int64_t(position) + 1;
  alignas(64) float q[kMaxHeadDim];
  for (int64_t d = 0; d < dim; ++d) q[d] = f16_round(q_head[d]);  // q as an f16 kernel sees it

  // Scores sixteen positions at a time from the block's transposed keys: lane i sums position i's
  // products over d in order, with a separate multiply and add: the scalar kernel's running sum.
  // Four groups of sixteen run side by side, so four independent chains hide the add latency.
  const int64_t bs = kv.block_size;
  constexpr int kGroups = 4;
  for (int64_t g0 = 0; g0 < n_seen; g0 += 16 * kGroups) {
    const uint16_t* keys[kGroups];
    int n = 0;
    for (; n < kGroups && g0 + 16 * n < n_seen; ++n) {
      const int64_t first = g0 + 16 * n;
      keys[n] = reinterpret_cast<const uint16_t*>(kv.key_head(table[size_t(first / bs)], kv_head)) + first % bs;
    }
    for (int i = n; i < kGroups; ++i) keys[i] = keys[0];  // computed and dropped
    __m512 acc[kGroups];
    for (auto& a : acc) a = _mm512_setzero_ps();
    for (int64_t d = 0; d < dim; ++d) {
      const __m512 qd = _mm512_set1_ps(q[d]);
      for (int i = 0; i < kGroups; ++i) {
        const __m512 k = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys[i] + d * bs)));
        acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(qd, k));
      }
    }
    for (int i = 0; i < n; ++i) {
      const int64_t valid = std::min<int64_t>(16, n_seen - g0 - 16 * i);
      _mm512_mask_storeu_ps(scores + g0 + 16 * i, __mmask16((1u << valid) - 1), _mm512_mul_ps(acc[i], _mm512_set1_ps(args.scale)));
    }
  }
  float max_score = -INFINITY;
  for (int64_t j = 0; j < n_seen; ++j) max_score = std::max(max_score, scores[j]);
  double denom = 0.0;  // summed in double and applied as one reciprocal, as llama.cpp's softmax does
  for (int64_t j = 0; j < n_seen; ++j) denom += double(scores[j] = std::exp(scores[j] - max_score));
  const float inv_denom = float(1.0 / denom);

  // Probabilities rounded to f16 sixteen at a time (the hardware conversion rounds to nearest even,
  // as f16_round does), then P·V with the output in registers for the common head sizes.
  const __m512 inv = _mm512_set1_ps(inv_denom);
  for (int64_t j = 0; j < n_seen; j += 16) {
    const __mmask16 m = __mmask16(n_seen - j >= 16 ? 0xffff : (1u << (n_seen - j)) - 1);
    const __m512 p = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, scores + j), inv);
    _mm512_mask_storeu_ps(scores + j, m, _mm512_cvtph_ps(_mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  }
  switch (n_vec) {
    case 4: return weigh_values<4>(kv, table, head_offset, scores, n_seen, out_head);
    case 8: return weigh_values<8>(kv, table, head_offset, scores, n_seen, out_head);
    default: break;
  }
  __m512 out[kMaxHeadDim / 16];
  for (int64_t i = 0; i < n_vec; ++i) out[i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_seen; ++j) {
    const auto* v = reinterpret_cast<const __m256i*>(kv.value_row(table[size_t(j / kv.block_size)], j % kv.block_size) + head_offset);
    const __m512 p = _mm512_set1_ps(scores[j]);
    for (int64_t i = 0; i < n_vec; ++i) out[i] = _mm512_add_ps(out[i], _mm512_mul_ps(p, _mm512_cvtph_ps(_mm256_loadu_si256(v + i))));
  }
  for (int64_t i = 0; i < n_vec; ++i) _mm512_storeu_ps(out_head + 16 * i, out[i]);
}

}  // namespace ridge::cpu
