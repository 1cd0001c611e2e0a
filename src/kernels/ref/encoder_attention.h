#pragma once
// The naive reference of cpu::encoder_attention_head (tests): scores, softmax and the weighted
// sum in double, one head of one text.
#include <cstdint>

namespace ridge::ref {

// q, k, v, out: (n_tokens, stride), head h at h * head_dim.
void encoder_attention(const float* q, const float* k, const float* v, float* out, int64_t stride, int64_t n_tokens,
                       int64_t n_head, int64_t head_dim, float scale);

}  // namespace ridge::ref
