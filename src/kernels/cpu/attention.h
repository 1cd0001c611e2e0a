#pragma once
// Attention for one (token, query head) over an f16 K/V history: q is rounded to f16 and
// dotted with K in f32, softmax in f32, the probabilities rounded to f16 and accumulated
// against V in f32: the arithmetic of an f16 attention kernel (and of llama.cpp's default path).
#include <cstdint>

#include "kernels/ref/attention.h"

namespace ridge::cpu {

// k, v: (n_kv, n_kv_heads, head_dim) f16; scores: min(n_kv, position + 1) floats of scratch.
void attention_head_f16(const ref::AttentionArgs& args, int64_t head, const float* q_head, int32_t position,
                        const uint16_t* k, const uint16_t* v, int64_t n_kv, float* scores, float* out_head);

// x (n) f32 -> f16
void store_f16(const float* x, int64_t n, uint16_t* out);

}  // namespace ridge::cpu
