#pragma once
// The blocks a layer is made of, as an architecture's layer loop calls them. Each block reads the
// residual stream of the batch, and adds its output back into it; its variant (QK-norm, sliding
// window, post-norm, activation, gating) comes from the ModelSpec, so a block call reads the same
// for every family that has the block.
#include <cstdint>

#include "model/weights.h"

namespace ridge {

class LayerPass {
 public:
  virtual ~LayerPass() = default;
  // RMSNorm, Q/K/V (+ biases), QK-norm, RoPE, paged causal attention (GQA; the layer's sliding
  // window), output projection, post-norm (Gemma 3), residual add.
  virtual void attention(const LayerWeights& w, int64_t layer) = 0;
  // Multi-head latent attention (DeepSeek): RMSNorm, the query (straight or through its low-rank
  // bottleneck), the KV latent and the shared RoPE key (all the cache keeps), each head's query
  // absorbed into the latent space, MQA over the latents, each head's value decompressed from the
  // attended latent, output projection, residual add.
  virtual void latent_attention(const LayerWeights& w, int64_t layer) = 0;
  // RMSNorm, gate and up, SwiGLU or GeGLU, down, post-norm (Gemma 3), residual add.
  virtual void dense_ffn(const LayerWeights& w) = 0;
  // RMSNorm, router (softmax or sigmoid, top-k, normalised and scaled weights), each chosen expert
  // over the tokens routed to it, the shared expert (gated for Qwen2-MoE), residual add.
  virtual void moe_ffn(const LayerWeights& w, int64_t layer) = 0;
};

}  // namespace ridge
