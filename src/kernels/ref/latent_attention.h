#pragma once
// Reference multi-head latent attention (DeepSeek's MLA) in its absorbed form: all heads attend
// over one shared row per position, [latent | RoPE key] (MQA with a single KV head). A head's
// query is its unrotated part already multiplied into the latent space, then its RoPE part; its
// output is the attended latent, which the head's value projection decompresses afterwards.
#include <cstdint>

namespace ridge::ref {

struct LatentAttentionArgs {
  int64_t n_heads;
  int64_t latent_dim;  // kv_lora_rank: the values, and the first part of every key row
  int64_t rope_dim;    // the shared RoPE key after it
  float scale;         // scores' factor
  int64_t width() const { return latent_dim + rope_dim; }
};

// q:   (n_tokens, n_heads, width), token t sitting at positions[t]
// kv:  (n_kv, width), rows 0..n_kv-1 are positions 0..n_kv-1
// out: (n_tokens, n_heads, latent_dim)
// Token t attends to positions 0..positions[t].
void latent_attention(const LatentAttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
                      const float* kv, int64_t n_kv, float* out);

}  // namespace ridge::ref
