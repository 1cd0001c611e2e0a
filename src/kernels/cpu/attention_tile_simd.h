#pragma once
// One attention tile over an f16 cache for several consecutive tokens of a sequence, bit for bit
// the scalar kernel of attention.cc (the arithmetic attention.h defines), written once over a
// vector of sixteen floats V (one AVX-512 register, or two AVX2 registers) and included by each
// ISA's file inside its private namespace. Every (token, head) is a row with its own sums; the
// tile's keys and values are loaded and converted once for a chunk of rows, which is what makes
// prefill cheaper than one token at a time:
// - scores: sixteen positions per vector from the block's transposed keys, each lane one running
//   sum over the head's dimensions, for up to V::kScoreRows rows per key load;
// - softmax: the exponentials sixteen at a time, summed in lanes by position;
// - P·V: sixteen output dimensions per vector, position after position, for up to V::kValueRows
//   rows per value load over the positions all of them see; the few positions only some rows see
//   (the causal diagonal, a window's start) go row by row, in the same order.
// V provides T, zero, set1, loadu, storeu, load_f16 (sixteen f16), fmadd, mul, sub, add, max,
// reduce_max, exp_nonpositive (exp_nonpositive.h's bits), round_f16, and the blocking constants
// kScoreRows, kScoreGroups, kValueRows, kMaxValueVectors. f16 x f16 products are exact, so fmadd
// gives the scalar kernel's separate multiply and add. Include inside the unit's private namespace,
// after <algorithm>, <cmath> and attention_kernels.h.
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
// in groups of sixteen, V::kScoreGroups groups per pass (a pass past g_end computes and drops).
template <class V, int NV, int RB>
void score_rows(const TileContext& c, const float* qr, float scale, int64_t g_first, int64_t g_end, float* scores) {
  constexpr int64_t dim = NV * 16;
  constexpr int G = V::kScoreGroups;
  const int64_t bs = c.kv->block_size;
  for (int64_t g0 = g_first; g0 < g_end; g0 += 16 * G) {
    const uint16_t* k[G];
    for (int g = 0; g < G; ++g) k[g] = g0 + 16 * g < g_end ? c.keys(g0 + 16 * g) : k[0];
    typename V::T acc[RB][G];
    for (auto& row : acc)
      for (auto& a : row) a = V::zero();
    for (int64_t d = 0; d < dim; ++d) {
      typename V::T key[G];
      for (int g = 0; g < G; ++g) key[g] = V::load_f16(k[g] + d * bs);
      for (int r = 0; r < RB; ++r) {
        const typename V::T q = V::set1(qr[r * dim + d]);
        for (int g = 0; g < G; ++g) acc[r][g] = V::fmadd(q, key[g], acc[r][g]);  // f16 x f16 is exact: the same as mul then add
      }
    }
    const typename V::T s = V::set1(scale);
    for (int r = 0; r < RB; ++r)
      for (int g = 0; g < G; ++g)
        if (g0 + 16 * g < g_end) V::storeu(scores + r * kAttentionTile + g0 + 16 * g, V::mul(acc[r][g], s));
  }
}

template <class V, int NV, int RB>
void score_chunk(int rows, const TileContext& c, const float* qr, float scale, int64_t g_first, int64_t g_end,
                 float* scores) {
  if constexpr (RB > 1)
    if (rows < RB) return score_chunk<V, NV, RB - 1>(rows, c, qr, scale, g_first, g_end, scores);
  score_rows<V, NV, RB>(c, qr, scale, g_first, g_end, scores);
}

// out[r] (DV x 16 dims at each row's pointer) += Σ_j p[r][j] · V_j over tile positions [lo, hi),
// position after position.
template <class V, int DV, int RB>
void value_rows(const TileContext& c, const float* const* p, float* const* out, int64_t dim_offset, int64_t lo,
                int64_t hi) {
  typename V::T acc[RB][DV];
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < DV; ++i) acc[r][i] = V::loadu(out[r] + 16 * i);
  for (int64_t j = lo; j < hi; ++j) {
    const uint16_t* v = c.values(j) + dim_offset;
    typename V::T vv[DV];
    for (int i = 0; i < DV; ++i) vv[i] = V::load_f16(v + 16 * i);
    for (int r = 0; r < RB; ++r) {
      const typename V::T pr = V::set1(p[r][j]);
      for (int i = 0; i < DV; ++i) acc[r][i] = V::fmadd(pr, vv[i], acc[r][i]);  // f16 x f16: exact
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < DV; ++i) V::storeu(out[r] + 16 * i, acc[r][i]);
}

template <class V, int DV, int RB>
void value_chunk(int rows, const TileContext& c, const float* const* p, float* const* out, int64_t dim_offset,
                 int64_t lo, int64_t hi) {
  if constexpr (RB > 1)
    if (rows < RB) return value_chunk<V, DV, RB - 1>(rows, c, p, out, dim_offset, lo, hi);
  value_rows<V, DV, RB>(c, p, out, dim_offset, lo, hi);
}

template <class V, int NV>
void tile_f16(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile, const KvLayerView& kv,
              std::span<const BlockId> table, float* scratch, float* partials, int64_t partial_stride) {
  constexpr int64_t dim = NV * 16;
  constexpr int DV = NV < V::kMaxValueVectors ? NV : V::kMaxValueVectors;  // output vectors per value pass
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
  for (int64_t r0 = 0; r0 < n_rows; r0 += V::kScoreRows)
    score_chunk<V, NV, V::kScoreRows>(int(std::min<int64_t>(V::kScoreRows, n_rows - r0)), c, qr + r0 * dim, args.scale, g_first,
                                g_end, scores + r0 * kAttentionTile);

  auto out_of = [&](int64_t r) { return partials + (r / heads) * partial_stride + (r % heads) * (dim + 2); };
  for (int64_t r = 0; r < n_rows; ++r) {
    const TileRange rr = range[r / heads];
    float* s = scores + r * kAttentionTile;
    std::fill(s + g_first, s + rr.lo, -INFINITY);
    std::fill(s + rr.hi, s + g_end, -INFINITY);
    typename V::T m = V::set1(-INFINITY);
    for (int64_t j = g_first; j < g_end; j += 16) m = V::max(m, V::loadu(s + j));
    const float max_score = V::reduce_max(m) + 0.0f;  // +0, never -0, as the scalar kernel
    const typename V::T mv = V::set1(max_score);
    typename V::T lanes = V::zero();
    for (int64_t j = g_first; j < g_end; j += 16) {
      const typename V::T p = V::exp_nonpositive(V::sub(V::loadu(s + j), mv));
      lanes = V::add(lanes, p);
      V::storeu(s + j, V::round_f16(p));
    }
    alignas(64) float lane[16];
    V::storeu(lane, lanes);
    float* part = out_of(r);
    part[0] = max_score;
    part[1] = sum_lanes16(lane);
    std::fill(part + 2, part + 2 + dim, 0.0f);
  }

  for (int64_t r0 = 0; r0 < n_rows; r0 += V::kValueRows) {
    const int rows = int(std::min<int64_t>(V::kValueRows, n_rows - r0));
    int64_t common_lo = 0, common_hi = kAttentionTile;
    for (int r = 0; r < rows; ++r) {
      common_lo = std::max(common_lo, range[(r0 + r) / heads].lo);
      common_hi = std::min(common_hi, range[(r0 + r) / heads].hi);
    }
    for (int64_t d0 = 0; d0 < dim; d0 += 16 * DV) {
      const float* p[V::kValueRows];
      float* out[V::kValueRows];
      for (int r = 0; r < rows; ++r) {
        p[r] = scores + (r0 + r) * kAttentionTile;
        out[r] = out_of(r0 + r) + 2 + d0;
      }
      if (common_lo >= common_hi) {  // no position every row sees: row by row
        for (int r = 0; r < rows; ++r) {
          const TileRange rr = range[(r0 + r) / heads];
          value_rows<V, DV, 1>(c, p + r, out + r, d0, rr.lo, rr.hi);
        }
        continue;
      }
      for (int r = 0; r < rows; ++r) value_rows<V, DV, 1>(c, p + r, out + r, d0, range[(r0 + r) / heads].lo, common_lo);
      value_chunk<V, DV, V::kValueRows>(rows, c, p, out, d0, common_lo, common_hi);
      for (int r = 0; r < rows; ++r) value_rows<V, DV, 1>(c, p + r, out + r, d0, common_hi, range[(r0 + r) / heads].hi);
    }
  }
}


// The tile for the head dimensions the kernel has (attention_tile_f16_simd_fits).
template <class V>
void tile_f16_any(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile, const KvLayerView& kv,
                  std::span<const BlockId> table, float* scratch, float* partials, int64_t partial_stride) {
  switch (args.head_dim) {
    case 16: return tile_f16<V, 1>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 32: return tile_f16<V, 2>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 64: return tile_f16<V, 4>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 128: return tile_f16<V, 8>(args, queries, tile, kv, table, scratch, partials, partial_stride);
    case 256: return tile_f16<V, 16>(args, queries, tile, kv, table, scratch, partials, partial_stride);  // Gemma 3
    default: break;
  }
}
