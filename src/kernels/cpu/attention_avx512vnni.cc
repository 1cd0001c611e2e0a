// One attention tile over an f16 cache with AVX-512 for several consecutive tokens of a sequence,
// bit for bit the scalar kernel of attention.cc (the arithmetic attention.h defines). Every
// (token, head) is a row with its own sums; the tile's keys and values are loaded and converted
// once for a chunk of rows, which is what makes prefill cheaper than one token at a time:
// - scores: sixteen positions per vector from the block's transposed keys, each lane one running
//   sum over the head's dimensions, for up to eight rows per key load;
// - softmax: the exponentials sixteen at a time (exp_nonpositive16), summed in lanes by position;
// - P·V: sixteen output dimensions per vector, position after position, for up to six rows per
//   value load over the positions all of them see; the few positions only some rows see (the
//   causal diagonal, a window's start) go row by row, in the same order.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive_avx512.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// exp_nonpositive16 must round as the scalar exp_nonpositive does: nothing fused.
#pragma GCC optimize("fp-contract=off")

namespace ridge::cpu {
namespace {

constexpr int kScoreRows = 8;  // rows per key load
constexpr int kValueRows = 6;  // rows per value load

struct TileContext {
  const KvLayerView* kv;
  std::span<const BlockId> table;
  int64_t kv_head, head_offset, tile_begin;
  const uint16_t* keys(int64_t j) const {  // 16 positions from tile position j (a multiple of 16)
    const int64_t pos = tile_begin + j, bs = kv->block_size;
    return reinterpret_cast<const uint16_t*>(kv->key_head(table[size_t(pos / bs)], kv_head)) + pos % bs;
  }
  const uint16_t* values(int64_t j) const {
    const int64_t pos = tile_begin + j, bs = kv->block_size;
    return reinterpret_cast<const uint16_t*>(kv->value_row(table[size_t(pos / bs)], pos % bs) + head_offset);
  }
};

// Raw scores (times scale) of RB rows (q at qr, dim floats each) for tile positions [g_first, g_end)
// in groups of sixteen, two groups per pass.
template <int NV, int RB>
void score_rows(const TileContext& c, const float* qr, float scale, int64_t g_first, int64_t g_end, float* scores) {
  constexpr int64_t dim = NV * 16;
  const int64_t bs = c.kv->block_size;
  for (int64_t g0 = g_first; g0 < g_end; g0 += 32) {
    const bool two = g0 + 16 < g_end;
    const uint16_t* k0 = c.keys(g0);
    const uint16_t* k1 = two ? c.keys(g0 + 16) : k0;  // computed and dropped
    __m512 acc[RB][2];
    for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
    for (int64_t d = 0; d < dim; ++d) {
      const __m512 a = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k0 + d * bs)));
      const __m512 b = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k1 + d * bs)));
      for (int r = 0; r < RB; ++r) {
        const __m512 q = _mm512_set1_ps(qr[r * dim + d]);
        acc[r][0] = _mm512_fmadd_ps(q, a, acc[r][0]);  // f16 x f16 is exact: the same as mul then add
        acc[r][1] = _mm512_fmadd_ps(q, b, acc[r][1]);
      }
    }
    const __m512 s = _mm512_set1_ps(scale);
    for (int r = 0; r < RB; ++r) {
      _mm512_storeu_ps(scores + r * kAttentionTile + g0, _mm512_mul_ps(acc[r][0], s));
      if (two) _mm512_storeu_ps(scores + r * kAttentionTile + g0 + 16, _mm512_mul_ps(acc[r][1], s));
    }
  }
}

template <int NV, int RB>
void score_chunk(int rows, const TileContext& c, const float* qr, float scale, int64_t g_first, int64_t g_end,
                 float* scores) {
  if constexpr (RB > 1)
    if (rows < RB) return score_chunk<NV, RB - 1>(rows, c, qr, scale, g_first, g_end, scores);
  score_rows<NV, RB>(c, qr, scale, g_first, g_end, scores);
}

// out[r] (DV x 16 dims at each row's pointer) += Σ_j p[r][j] · V_j over tile positions [lo, hi),
// position after position.
template <int DV, int RB>
void value_rows(const TileContext& c, const float* const* p, float* const* out, int64_t dim_offset, int64_t lo,
                int64_t hi) {
  __m512 acc[RB][DV];
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < DV; ++i) acc[r][i] = _mm512_loadu_ps(out[r] + 16 * i);
  for (int64_t j = lo; j < hi; ++j) {
    const uint16_t* v = c.values(j) + dim_offset;
    __m512 vv[DV];
    for (int i = 0; i < DV; ++i) vv[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + 16 * i)));
    for (int r = 0; r < RB; ++r) {
      const __m512 pr = _mm512_set1_ps(p[r][j]);
      for (int i = 0; i < DV; ++i) acc[r][i] = _mm512_fmadd_ps(pr, vv[i], acc[r][i]);  // f16 x f16: exact
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < DV; ++i) _mm512_storeu_ps(out[r] + 16 * i, acc[r][i]);
}

template <int DV, int RB>
void value_chunk(int rows, const TileContext& c, const float* const* p, float* const* out, int64_t dim_offset,
                 int64_t lo, int64_t hi) {
  if constexpr (RB > 1)
    if (rows < RB) return value_chunk<DV, RB - 1>(rows, c, p, out, dim_offset, lo, hi);
  value_rows<DV, RB>(c, p, out, dim_offset, lo, hi);
}

template <int NV>
void tile_f16(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile, const KvLayerView& kv,
              std::span<const BlockId> table, float* scratch, float* partials, int64_t partial_stride) {
  constexpr int64_t dim = NV * 16;
  constexpr int DV = NV < 4 ? NV : 4;  // output vectors per value pass
  const int64_t heads = queries.n_heads, n_rows = queries.n_tokens * heads;
  const int64_t kv_head = queries.first_head / (args.n_heads / args.n_kv_heads);
  const TileContext c{&kv, table, kv_head, kv_head * (kv.row_bytes / kv.n_kv_heads), tile * kAttentionTile};
  float* scores = scratch;                       // (n_rows, kAttentionTile)
  float* qr = scratch + n_rows * kAttentionTile;  // (n_rows, dim): q as an f16 kernel sees it
  TileRange range[kAttentionQueryBlock];
  for (int64_t i = 0; i < queries.n_tokens; ++i) range[i] = tile_range(queries, i, tile);
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* q = queries.q + (r / heads) * queries.q_stride + (r % heads) * dim;
    for (int64_t d = 0; d < dim; ++d) qr[r * dim + d] = round_to_f16(q[d]);
  }
  // Positions in groups of sixteen from the first one any row sees to the last.
  const int64_t g_first = range[0].lo / 16 * 16, g_end = (range[queries.n_tokens - 1].hi + 15) / 16 * 16;
  for (int64_t r0 = 0; r0 < n_rows; r0 += kScoreRows)
    score_chunk<NV, kScoreRows>(int(std::min<int64_t>(kScoreRows, n_rows - r0)), c, qr + r0 * dim, args.scale, g_first,
                                g_end, scores + r0 * kAttentionTile);

  auto out_of = [&](int64_t r) { return partials + (r / heads) * partial_stride + (r % heads) * (dim + 2); };
  for (int64_t r = 0; r < n_rows; ++r) {
    const TileRange rr = range[r / heads];
    float* s = scores + r * kAttentionTile;
    std::fill(s + g_first, s + rr.lo, -INFINITY);
    std::fill(s + rr.hi, s + g_end, -INFINITY);
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t j = g_first; j < g_end; j += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(s + j));
    const float max_score = _mm512_reduce_max_ps(m) + 0.0f;  // +0, never -0, as the scalar kernel
    const __m512 mv = _mm512_set1_ps(max_score);
    __m512 lanes = _mm512_setzero_ps();
    for (int64_t j = g_first; j < g_end; j += 16) {
      const __m512 p = exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(s + j), mv));
      lanes = _mm512_add_ps(lanes, p);
      _mm512_storeu_ps(s + j, _mm512_cvtph_ps(_mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    }
    alignas(64) float lane[16];
    _mm512_store_ps(lane, lanes);
    float* part = out_of(r);
    part[0] = max_score;
    part[1] = sum_lanes16(lane);
    std::fill(part + 2, part + 2 + dim, 0.0f);
  }

  for (int64_t r0 = 0; r0 < n_rows; r0 += kValueRows) {
    const int rows = int(std::min<int64_t>(kValueRows, n_rows - r0));
    int64_t common_lo = 0, common_hi = kAttentionTile;
    for (int r = 0; r < rows; ++r) {
      common_lo = std::max(common_lo, range[(r0 + r) / heads].lo);
      common_hi = std::min(common_hi, range[(r0 + r) / heads].hi);
    }
    for (int64_t d0 = 0; d0 < dim; d0 += 16 * DV) {
      const float* p[kValueRows];
      float* out[kValueRows];
      for (int r = 0; r < rows; ++r) {
        p[r] = scores + (r0 + r) * kAttentionTile;
        out[r] = out_of(r0 + r) + 2 + d0;
      }
      if (common_lo >= common_hi) {  // no position every row sees: row by row
        for (int r = 0; r < rows; ++r) {
          const TileRange rr = range[(r0 + r) / heads];
          value_rows<DV, 1>(c, p + r, out + r, d0, rr.lo, rr.hi);
        }
        continue;
      }
      for (int r = 0; r < rows; ++r) value_rows<DV, 1>(c, p + r, out + r, d0, range[(r0 + r) / heads].lo, common_lo);
      value_chunk<DV, kValueRows>(rows, c, p, out, d0, common_lo, common_hi);
      for (int r = 0; r < rows; ++r) value_rows<DV, 1>(c, p + r, out + r, d0, common_hi, range[(r0 + r) / heads].hi);
    }
  }
}

}  // namespace

void exp_nonpositive_avx512(const float* x, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, exp_nonpositive16(_mm512_loadu_ps(x + i)));
  const __mmask16 m = __mmask16((1u << (n - i)) - 1);
  _mm512_mask_storeu_ps(y + i, m, exp_nonpositive16(_mm512_maskz_loadu_ps(m, x + i)));
}

bool attention_tile_f16_avx512_fits(const ref::AttentionArgs& args, const KvLayerView& kv) {
  const int64_t d = args.head_dim;
  return kv.block_size % 16 == 0 && (d == 16 || d == 32 || d == 64 || d == 128 || d == 256);
}

void attention_tile_f16_avx512(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                               int64_t partial_stride) {
  switch (args.head_dim) {
    case 16: return tile_f16<1>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 32: return tile_f16<2>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 64: return tile_f16<4>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 128: return tile_f16<8>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 256: return tile_f16<16>(args, queries, tile, kv, table, scratch, partials, partial_stride);  // Gemma 3
    default: break;
  }
}

}  // namespace ridge::cpu
