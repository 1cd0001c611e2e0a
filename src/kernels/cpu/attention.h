#pragma once
// Attention over a paged K/V history, tiled: a token's history is cut into tiles of
// kAttentionTile positions; each tile yields, for every query head of one KV group, its partial
// softmax (max score m, Σ exp(score - m), and Σ exp(score - m) · V), and the tiles merge in order
// with the usual rescaling (FlashAttention's online softmax, tile by tile). The score matrix is
// never materialised: a tile's scores for a few heads are the only scratch. The query heads that
// share a KV head are computed together, so each tile's K/V is read once for the group. Tiles of
// one token can run on different threads (flash-decoding) and merge afterwards; the tile
// boundaries are fixed by position, so the result is bit-identical however the work is split.
//
// For an f16 cache, q is rounded to f16 and dotted with K in f32 (one running sum over the head's
// dimensions per position; the products of two f16 values are exact, so fusing them changes
// nothing), the exponentials are exp_nonpositive's (kernels/cpu/exp_nonpositive.h) summed in
// sixteen lanes by position (lane j mod 16 of the tile) and the lanes in a fixed tree, the
// probabilities rounded to f16 and accumulated against V in f32, position after position: the
// arithmetic of an f16 attention kernel, defined so that a vector kernel reproduces the scalar
// one's bits. Other cache types are decoded to f32 row by row (FP8/INT8 times their per-head scale).
//
// Prefill reads each tile once for several consecutive tokens of a sequence
// (attention_tile_queries): every (token, head) row keeps its own sums, so a token's bits do not
// depend on which tokens share the call.
#include <cstdint>
#include <span>

#include "kernels/ref/attention.h"
#include "kv/kv_store.h"

namespace ridge::cpu {

inline constexpr int64_t kAttentionTile = 256;  // positions per tile (a multiple of 16)

inline int64_t attention_tiles(int32_t position) { return int64_t(position) / kAttentionTile + 1; }
// The first tile a query whose history starts at first_position reads (sliding windows).
inline int64_t first_attention_tile(int32_t first_position) { return int64_t(first_position) / kAttentionTile; }

// Query heads first_head .. first_head + n_heads - 1 (all reading one KV head) of a token at
// `position`, which attends to positions first_position..position (0 unless the layer has a
// sliding window).
struct AttentionQuery {
  const float* q;  // (n_heads, head_dim)
  int64_t first_head, n_heads;
  int32_t position;
  int32_t first_position = 0;
};

// Floats of one tile's partial result for n_heads heads: per head [m, s, o (head_dim)].
inline int64_t attention_partial_floats(const ref::AttentionArgs& args, int64_t n_heads) {
  return n_heads * (args.head_dim + 2);
}

// Scratch floats of one call for n_tokens tokens of n_heads heads each.
inline int64_t attention_scratch_floats(const ref::AttentionArgs& args, int64_t n_heads, int64_t n_tokens = 1) {
  return n_heads * n_tokens * (kAttentionTile + args.head_dim);
}

// Tile `tile` of the query's history -> partial (attention_partial_floats). scratch:
// attention_scratch_floats(args, query.n_heads). table must cover the tile's positions.
void attention_tile(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile, const KvLayerView& kv,
                    std::span<const BlockId> table, float* scratch, float* partial);

// Consecutive tokens of one sequence, the same heads of each, all of whose histories include the
// tile being computed: positions increasing, first positions non-decreasing.
struct AttentionQueries {
  const float* q;    // token i's heads at q + i * q_stride: (n_heads, head_dim)
  int64_t q_stride;  // floats
  int64_t first_head, n_heads;
  const int32_t* positions;        // n_tokens
  const int32_t* first_positions;  // n_tokens
  int64_t n_tokens;
};
// Most tokens one attention_tile_queries call takes.
inline constexpr int64_t kAttentionQueryBlock = 8;

// Tile `tile` for each token -> its partial at partials + i * partial_stride; the bits
// attention_tile gives each token alone. scratch: attention_scratch_floats(args, n_heads, n_tokens).
void attention_tile_queries(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                            const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                            int64_t partial_stride);

// The n_tiles partials of one query, in tile order -> out (n_heads, head_dim).
void attention_merge(const ref::AttentionArgs& args, int64_t n_heads, const float* partials, int64_t n_tiles, float* out);

// The n_tiles partials of one query, in tile order, merged into one partial of the same layout
// ([m, s, o] per head, o not yet divided by s): what a rank of a KV-parallel group (Helix) contributes
// for the positions it holds. No tiles: m = -inf, s = 0, o = 0, which weighs nothing in a merge.
// attention_merge over such partials in rank order finishes the query.
void attention_merge_partial(const ref::AttentionArgs& args, int64_t n_heads, const float* partials, int64_t n_tiles,
                             float* out_partial);

// One (token, query head), all tiles in order (tests; the CUDA kernels' oracle).
void attention_head_paged(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                          const KvLayerView& kv, std::span<const BlockId> table, float* out_head,
                          int32_t first_position = 0);

// x (n) f32 -> f16
void store_f16(const float* x, int64_t n, uint16_t* out);

}  // namespace ridge::cpu
