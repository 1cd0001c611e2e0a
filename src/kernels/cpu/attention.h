#pragma once
// Attention for one (token, query head) over a paged K/V history: the rows of positions
// 0..position are found through the sequence's block table. For an f16 cache, q is rounded to f16
// and dotted with K in f32, softmax in f32, the probabilities rounded to f16 and accumulated
// against V in f32: the arithmetic of an f16 attention kernel (and of llama.cpp's default path).
// Other cache types are decoded to f32 row by row (FP8/INT8 times their per-head scale).
#include <cstdint>
#include <span>

#include "kernels/ref/attention.h"
#include "kv/kv_store.h"

namespace ridge::cpu {

// scores: position + 1 floats of scratch. table must cover positions 0..position.
void attention_head_paged(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                          const KvLayerView& kv, std::span<const BlockId> table, float* scores, float* out_head);

// x (n) f32 -> f16
void store_f16(const float* x, int64_t n, uint16_t* out);

}  // namespace ridge::cpu
