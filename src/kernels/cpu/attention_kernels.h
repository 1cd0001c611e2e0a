#pragma once
// Per-ISA bodies of the paged attention (chosen at run time by attention.cc).
#include <cstdint>
#include <span>

#include "core/fp16.h"
#include "kernels/ref/attention.h"
#include "kv/kv_store.h"

namespace ridge::cpu {

inline float f16_round(float x) { return f16_to_f32(f32_to_f16(x)); }

// F16 cache through the portable scalar kernel, whatever the CPU (tests compare the wide one to it).
void attention_head_reference_order(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                                    const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head);

// F16 cache, head_dim and block_size multiples of 16 (head_dim up to 512).
void attend_f16_avx512(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                       const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head);

}  // namespace ridge::cpu
