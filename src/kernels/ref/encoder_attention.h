#pragma once
// The naive reference of cpu::encoder_attention_rows (tests): scores, softmax and the weighted
// sum in double, every head of one text.
#include <cstdint>

namespace ridge::ref {

// q, out: (n_tokens, stride), head h at h * head_dim; k, v: (n_tokens, kv_stride) (0: stride), KV
// head h / n_group at (h / n_group) * head_dim. window > 0: token i sees token j when |i - j| < window.
void encoder_attention(const float* q, const float* k, const float* v, float* out, int64_t stride, int64_t n_tokens,
                       int64_t n_head, int64_t head_dim, float scale, int64_t kv_stride = 0, int64_t n_group = 1,
                       int64_t window = 0);

}  // namespace ridge::ref
