#pragma once
// Multi-head latent attention over a keys-only paged store (kv/kv_store.h: one row per position,
// [latent | RoPE key], transposed within a block), tiled as kernels/cpu/attention.h tiles
// ordinary attention, with the same fixed tile boundaries and the same merge: a tile's rows are
// decoded to f32 once and serve every head (MQA), its partial result per head is [m, s, o
// (latent_dim)]. Scores run over many positions at once, P·V over many latent dimensions at once. Rounding as for ordinary attention: with an f16 cache the query is rounded to f16
// and the probabilities too before they weight the latents.
#include <cstdint>
#include <span>

#include "kernels/cpu/attention.h"
#include "kernels/ref/latent_attention.h"
#include "kv/kv_store.h"

namespace ridge::cpu {

// Floats of one tile's partial result for all heads.
inline int64_t latent_attention_partial_floats(const ref::LatentAttentionArgs& args) {
  return args.n_heads * (args.latent_dim + 2);
}
// Per-thread scratch of one tile: its rows in f32 (as rows and transposed), every head's scores,
// one rounded query (the same for several tokens in one call).
inline int64_t latent_attention_scratch_floats(const ref::LatentAttentionArgs& args) {
  return kAttentionTile * (2 * args.width() + args.n_heads) + args.width();
}

// Tile `tile` of the history of a token at `position` -> partial. q: (n_heads, width).
void latent_attention_tile(const ref::LatentAttentionArgs& args, const float* q, int32_t position, int64_t tile,
                           const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partial);

// Consecutive tokens of one sequence (queries at q + i * q_stride, positions increasing, each
// history including the tile), one decode of the tile's rows for all: token i's partial at
// partials + i * partial_stride, the bits latent_attention_tile gives it alone. 1..kAttentionQueryBlock tokens.
void latent_attention_tile_queries(const ref::LatentAttentionArgs& args, const float* q, int64_t q_stride,
                                   const int32_t* positions, int64_t n_tokens, int64_t tile, const KvLayerView& kv,
                                   std::span<const BlockId> table, float* scratch, float* partials,
                                   int64_t partial_stride);
// The same body built for AVX-512 (latent_attention_avx512vnni.cc): the same bits, wider.
void latent_attention_tile_queries_avx512(const ref::LatentAttentionArgs& args, const float* q, int64_t q_stride,
                                          const int32_t* positions, int64_t n_tokens, int64_t tile,
                                          const KvLayerView& kv, std::span<const BlockId> table, float* scratch,
                                          float* partials, int64_t partial_stride);

// The n_tiles partials of one token, in tile order -> out (n_heads, latent_dim).
void latent_attention_merge(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles, float* out);

// ... merged into one partial of the same layout, o not yet divided by s (a KV-parallel rank's share;
// kernels/cpu/attention.h, attention_merge_partial).
void latent_attention_merge_partial(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles,
                                    float* out_partial);

// One token, all tiles in order (tests).
void latent_attention_paged(const ref::LatentAttentionArgs& args, const float* q, int32_t position,
                            const KvLayerView& kv, std::span<const BlockId> table, float* out);

}  // namespace ridge::cpu
