#pragma once
// Reference causal attention with grouped-query heads over a contiguous K/V history.
#include <cstdint>

namespace ridge::ref {

struct AttentionArgs {
  int64_t n_heads;     // query heads
  int64_t n_kv_heads;  // key/value heads; query head h reads kv head h / (n_heads / n_kv_heads)
  int64_t head_dim;
  float scale;         // usually 1/sqrt(head_dim)
};

// q:   (n_tokens, n_heads, head_dim), token t sits at position positions[t]
// k,v: (n_kv, n_kv_heads, head_dim), rows 0..n_kv-1 are positions 0..n_kv-1
// out: (n_tokens, n_heads, head_dim)
// Token t attends to positions 0..positions[t] (causal).
void attention(const AttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
               const float* k, const float* v, int64_t n_kv, float* out);

}  // namespace ridge::ref
