#include "kernels/cpu/latent_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/latent_attention_body.h"

namespace ridge::cpu {
namespace {

bool wide() {
  static const bool avx512 = active_isa() == Isa::Avx512Vnni;
  return avx512;
}

}  // namespace

void latent_attention_tile_queries(const ref::LatentAttentionArgs& args, const float* q, int64_t q_stride,
                                   const int32_t* positions, int64_t n_tokens, int64_t tile, const KvLayerView& kv,
                                   std::span<const BlockId> table, float* scratch, float* partials,
                                   int64_t partial_stride) {
  if (n_tokens < 1 || n_tokens > kAttentionQueryBlock)
    fail("latent attention: {} tokens in one call (1..{})", n_tokens, kAttentionQueryBlock);
  if (wide())
    return latent_attention_tile_queries_avx512(args, q, q_stride, positions, n_tokens, tile, kv, table, scratch,
                                                partials, partial_stride);
  latent_tile_queries_body(args, q, q_stride, positions, n_tokens, tile, kv, table, scratch, partials, partial_stride);
}

void latent_attention_tile(const ref::LatentAttentionArgs& args, const float* q, int32_t position, int64_t tile,
                           const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partial) {
  latent_attention_tile_queries(args, q, 0, &position, 1, tile, kv, table, scratch, partial, 0);
}

void latent_attention_merge(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles, float* out) {
  // The ordinary merge over one group of every head, whose "head" is the latent.
  const ref::AttentionArgs merged{args.n_heads, 1, args.latent_dim, args.scale};
  attention_merge(merged, args.n_heads, partials, n_tiles, out);
}

void latent_attention_merge_partial(const ref::LatentAttentionArgs& args, const float* partials, int64_t n_tiles,
                                    float* out_partial) {
  const ref::AttentionArgs merged{args.n_heads, 1, args.latent_dim, args.scale};
  attention_merge_partial(merged, args.n_heads, partials, n_tiles, out_partial);
}

void latent_attention_paged(const ref::LatentAttentionArgs& args, const float* q, int32_t position,
                            const KvLayerView& kv, std::span<const BlockId> table, float* out) {
  const int64_t n_tiles = attention_tiles(position), part = latent_attention_partial_floats(args);
  std::vector<float> scratch(size_t(latent_attention_scratch_floats(args))), partials(size_t(n_tiles * part));
  for (int64_t c = 0; c < n_tiles; ++c)
    latent_attention_tile(args, q, position, c, kv, table, scratch.data(), partials.data() + c * part);
  latent_attention_merge(args, partials.data(), n_tiles, out);
}

}  // namespace ridge::cpu
