#pragma once
// A Gemma 3 text model with bidirectional attention (EmbeddingGemma): embeddings scaled by
// sqrt(n_embd), pre- and post-norm RMSNorm blocks (weights stored as w, applied as 1 + w), QK-norm
// per head, RoPE with one base for full-attention layers and another for sliding ones, GQA, GeGLU
// (GELU tanh). Loaded from a Hugging Face Gemma3TextModel directory (config.json model_type
// "gemma3_text" + safetensors); matrices stay views in their stored type, like the decoders'.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/weights.h"

namespace ridge {

struct GemmaEncoderSpec {
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0;
  int64_t n_layer = 0;
  int64_t n_ff = 0;
  int64_t n_positions = 0;      // max_position_embeddings: the longest text
  int64_t sliding_window = 0;   // a sliding layer's token i sees j when |i - j| < sliding_window
                                // (config.json's sliding_window / 2 + 1, as transformers reads it)
  std::vector<bool> sliding;    // per layer: sliding window and the local RoPE base
  float rope_theta = 10000.0f;  // full-attention layers
  float rope_theta_local = 10000.0f;
  float norm_eps = 1e-6f;
  float attention_scale = 0.0f;  // query_pre_attn_scalar^-0.5
  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
};

// Norm weights hold 1 + w (Gemma's RMSNorm multiplies by 1 + w; added once at load, in f32 as
// transformers does), so a plain RMSNorm applies them.
struct GemmaLayerWeights {
  WeightRef attn_norm;       // (n_embd) input_layernorm
  WeightRef wq, wk, wv;      // (q_dim, n_embd), (kv_dim, n_embd), (kv_dim, n_embd)
  WeightRef q_norm, k_norm;  // (head_dim)
  WeightRef wo;              // (n_embd, q_dim)
  WeightRef post_attn_norm;  // (n_embd)
  WeightRef ffn_norm;        // (n_embd) pre_feedforward_layernorm
  WeightRef w_gate, w_up;    // (n_ff, n_embd)
  WeightRef w_down;          // (n_embd, n_ff)
  WeightRef post_ffn_norm;   // (n_embd)
};

struct GemmaWeights {
  WeightRef token_embd;  // (n_vocab, n_embd)
  WeightRef output_norm;
  std::vector<GemmaLayerWeights> layers;
};

struct GemmaEncoderModel {
  GemmaEncoderSpec spec;
  GemmaWeights weights;
  std::shared_ptr<const void> storage;  // whatever keeps the bytes alive
};

// config.json + safetensors of a directory. Error naming the field or tensor: another model_type,
// causal attention, an activation, RoPE scaling or soft-capping ridge does not run, shapes that do
// not agree with the config.
GemmaEncoderModel load_gemma_safetensors(const std::string& dir);

}  // namespace ridge
