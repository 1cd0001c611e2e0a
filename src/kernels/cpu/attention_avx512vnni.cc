// One attention tile over an f16 cache with AVX-512, bit for bit the scalar kernel of
// attention.cc: the same roundings (q and the probabilities to f16) and the same order of every
// sum. Each score is one running sum over the head's dimensions (as the scalar kernel), computed
// for sixteen positions per instruction from the block's transposed keys; P·V runs sixteen output
// dimensions per instruction, each summed position by position with a separate multiply and add.
// The query heads of a KV group go through together, a few at a time, so every key and value
// vector is loaded and converted once for all of them.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/attention_kernels.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// The scalar kernel is compiled without FMA: fusing here would round differently.
#pragma GCC optimize("fp-contract=off")

namespace ridge::cpu {
namespace {

// Heads [h0, h0 + NH) of the query over tile positions [begin, end): NV x 16 dimensions.
template <int NV, int NH>
void heads_tile(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t h0, int64_t begin, int64_t end,
                const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* partial) {
  constexpr int64_t dim = NV * 16;
  const int64_t kv_head = (query.first_head + h0) / (args.n_heads / args.n_kv_heads);
  const int64_t head_offset = kv_head * (kv.row_bytes / kv.n_kv_heads);
  const int64_t bs = kv.block_size, n = end - begin;
  alignas(64) float q[NH][dim];
  for (int h = 0; h < NH; ++h)
    for (int64_t d = 0; d < dim; ++d) q[h][d] = round_to_f16(query.q[(h0 + h) * dim + d]);  // q as an f16 kernel sees it

  // Scores, sixteen positions per vector: lane i sums position i's products over d in order, with
  // a separate multiply and add. Four groups of sixteen side by side hide the add latency.
  constexpr int kGroups = 4;
  for (int64_t g0 = 0; g0 < n; g0 += 16 * kGroups) {
    const uint16_t* keys[kGroups];
    int n_groups = 0;
    for (; n_groups < kGroups && g0 + 16 * n_groups < n; ++n_groups) {
      const int64_t first = begin + g0 + 16 * n_groups;
      keys[n_groups] = reinterpret_cast<const uint16_t*>(kv.key_head(table[size_t(first / bs)], kv_head)) + first % bs;
    }
    for (int i = n_groups; i < kGroups; ++i) keys[i] = keys[0];  // computed and dropped
    __m512 acc[NH][kGroups];
    for (auto& row : acc)
      for (auto& a : row) a = _mm512_setzero_ps();
    for (int64_t d = 0; d < dim; ++d) {
      __m512 k[kGroups];
      for (int i = 0; i < kGroups; ++i)
        k[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys[i] + d * bs)));
      for (int h = 0; h < NH; ++h) {
        const __m512 qd = _mm512_set1_ps(q[h][d]);
        for (int i = 0; i < kGroups; ++i) acc[h][i] = _mm512_add_ps(acc[h][i], _mm512_mul_ps(qd, k[i]));
      }
    }
    for (int h = 0; h < NH; ++h)
      for (int i = 0; i < n_groups; ++i) {
        const int64_t valid = std::min<int64_t>(16, n - g0 - 16 * i);
        _mm512_mask_storeu_ps(scores + h * kAttentionTile + g0 + 16 * i, __mmask16((1u << valid) - 1),
                              _mm512_mul_ps(acc[h][i], _mm512_set1_ps(args.scale)));
      }
  }

  // Positions before a sliding window's start were scored with the tile (sixteen at a time from
  // block-aligned keys) and are dropped here: their probability is exactly 0.
  const int64_t skip = std::max<int64_t>(0, int64_t(query.first_position) - begin);
  for (int h = 0; h < NH; ++h) std::fill(scores + h * kAttentionTile, scores + h * kAttentionTile + skip, -INFINITY);

  // Per head: max, exponentials and their sum in the scalar kernel's order, then the probabilities
  // rounded to f16 sixteen at a time (vcvtps2ph rounds to nearest even, as round_to_f16 does).
  float max_score[NH];
  double sum[NH];
  for (int h = 0; h < NH; ++h) {
    float* s = scores + h * kAttentionTile;
    max_score[h] = -INFINITY;
    for (int64_t j = skip; j < n; ++j) max_score[h] = std::max(max_score[h], s[j]);
    sum[h] = 0.0;
    for (int64_t j = skip; j < n; ++j) sum[h] += double(s[j] = std::exp(s[j] - max_score[h]));
    for (int64_t j = 0; j < n; j += 16) {
      const __mmask16 m = __mmask16(n - j >= 16 ? 0xffff : (1u << (n - j)) - 1);
      const __m512 p = _mm512_maskz_loadu_ps(m, s + j);
      _mm512_mask_storeu_ps(s + j, m, _mm512_cvtph_ps(_mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    }
  }

  __m512 out[NH][NV];
  for (auto& row : out)
    for (auto& o : row) o = _mm512_setzero_ps();
  for (int64_t j = skip; j < n; ++j) {
    const int64_t pos = begin + j;
    const auto* v = reinterpret_cast<const __m256i*>(kv.value_row(table[size_t(pos / bs)], pos % bs) + head_offset);
    __m512 vv[NV];
    for (int i = 0; i < NV; ++i) vv[i] = _mm512_cvtph_ps(_mm256_loadu_si256(v + i));
    for (int h = 0; h < NH; ++h) {
      const __m512 p = _mm512_set1_ps(scores[h * kAttentionTile + j]);
      for (int i = 0; i < NV; ++i) out[h][i] = _mm512_add_ps(out[h][i], _mm512_mul_ps(p, vv[i]));
    }
  }
  for (int h = 0; h < NH; ++h) {
    float* part = partial + (h0 + h) * (dim + 2);
    part[0] = max_score[h];
    part[1] = float(sum[h]);
    for (int i = 0; i < NV; ++i) _mm512_storeu_ps(part + 2 + 16 * i, out[h][i]);
  }
}

template <int NV>
void tile_f16(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile, const KvLayerView& kv,
              std::span<const BlockId> table, float* scores, float* partial) {
  constexpr int kHeads = NV >= 4 ? 16 / NV : 4;  // heads per pass: their outputs stay in registers
  const int64_t begin = tile * kAttentionTile;
  const int64_t end = std::min<int64_t>(int64_t(query.position) + 1, begin + kAttentionTile);
  int64_t h = 0;
  for (; h + kHeads <= query.n_heads; h += kHeads)
    heads_tile<NV, kHeads>(args, query, h, begin, end, kv, table, scores, partial);
  const int64_t rest = query.n_heads - h;
  if constexpr (kHeads > 3)
    if (rest == 3) return heads_tile<NV, 3>(args, query, h, begin, end, kv, table, scores, partial);
  if constexpr (kHeads > 2)
    if (rest == 2) return heads_tile<NV, 2>(args, query, h, begin, end, kv, table, scores, partial);
  if (rest == 1) heads_tile<NV, 1>(args, query, h, begin, end, kv, table, scores, partial);
}

}  // namespace

bool attention_tile_f16_avx512_fits(const ref::AttentionArgs& args, const KvLayerView& kv) {
  const int64_t d = args.head_dim;
  return kv.block_size % 16 == 0 && (d == 16 || d == 32 || d == 64 || d == 128 || d == 256);
}

void attention_tile_f16_avx512(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* partial) {
  switch (args.head_dim) {
    case 16: return tile_f16<1>(args, query, tile, kv, table, scores, partial);
    case 32: return tile_f16<2>(args, query, tile, kv, table, scores, partial);
    case 64: return tile_f16<4>(args, query, tile, kv, table, scores, partial);
    case 128: return tile_f16<8>(args, query, tile, kv, table, scores, partial);
    case 256: return tile_f16<16>(args, query, tile, kv, table, scores, partial);  // Gemma 3
    default: break;
  }
}

}  // namespace ridge::cpu
