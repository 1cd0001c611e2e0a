// kernels/cpu/latent_attention_body.h built with AVX-512 flags (and no FMA contraction): the
// portable build's bits, sixteen lanes at a time.
// GCC 12 warns inside its own AVX-512 headers about the undefined first operand of some intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/cpu/latent_attention_body.h"

namespace ridge::cpu {

void latent_attention_tile_queries_avx512(const ref::LatentAttentionArgs& args, const float* q, int64_t q_stride,
                                          const int32_t* positions, int64_t n_tokens, int64_t tile,
                                          const KvLayerView& kv, std::span<const BlockId> table, float* scratch,
                                          float* partials, int64_t partial_stride) {
  latent_tile_queries_body(args, q, q_stride, positions, n_tokens, tile, kv, table, scratch, partials, partial_stride);
}

}  // namespace ridge::cpu
