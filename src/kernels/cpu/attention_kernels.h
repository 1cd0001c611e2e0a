#pragma once
// Per-ISA bodies of the tiled paged attention (chosen at run time by attention.cc).
#include <cstdint>
#include <span>

#include "kernels/cpu/attention.h"

namespace ridge::cpu {

// F16 cache through the portable scalar kernel, whatever the CPU (tests compare the wide one to it).
void attention_tile_reference_order(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile,
                                    const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* partial);

// F16 cache, block_size a multiple of 16, head_dim 16, 32, 64 or 128: the scalar kernel's bits.
bool attention_tile_f16_avx512_fits(const ref::AttentionArgs& args, const KvLayerView& kv);
void attention_tile_f16_avx512(const ref::AttentionArgs& args, const AttentionQuery& query, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* partial);

}  // namespace ridge::cpu
