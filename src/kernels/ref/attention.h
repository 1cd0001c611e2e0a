#pragma once
// Reference causal attention with grouped-query heads over a contiguous K/V history.
#include <cstdint>

namespace ridge::ref {

struct AttentionArgs {
  int64_t n_heads;     // query heads
  int64_t n_kv_heads;  // key/value heads; query head h reads kv head h / (n_heads / n_kv_heads)
  int64_t head_dim;
  float scale;         // usually 1/sqrt(head_dim)
  int64_t window = 0;  // > 0: a token sees only the last `window` positions, its own included
};

// q:   (n_tokens, n_heads, head_dim), token t sits at position positions[t]
// k,v: (n_kv, n_kv_heads, head_dim), rows 0..n_kv-1 are positions 0..n_kv-1
// out: (n_tokens, n_heads, head_dim)
// Token t attends to positions 0..positions[t] (causal), or its last args.window of them.
void attention(const AttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
               const float* k, const float* v, int64_t n_kv, float* out);

// One (token, query head) of the above: q_head (head_dim) at `position`, out_head (head_dim).
// `scores` must hold min(n_kv, position + 1) floats. Threads can split the (token, head) pairs.
void attention_head(const AttentionArgs& args, int64_t head, const float* q_head, int32_t position, const float* k,
                    const float* v, int64_t n_kv, float* scores, float* out_head);

}  // namespace ridge::ref
