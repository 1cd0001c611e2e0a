#pragma once
// The one description of a model's shapes. The engine builds its buffers from it and the
// planner counts bytes and FLOPs from it: both read the same numbers.
#include <cstdint>
#include <string>

namespace ridge {

// How RoPE pairs the dimensions of a head. Normal (GPT-J / GGUF llama): adjacent pairs (2i, 2i+1).
// NeoX (HF rotate_half, Qwen2 in GGUF): pairs (i, i + rot_dim/2).
enum class RopeStyle { Normal, NeoX };

struct RopeScaling {
  enum class Type { None, Linear, Llama3 };
  Type type = Type::None;
  float factor = 1.0f;             // Linear: positions divided by it; Llama3: low-frequency divisor
  float low_freq_factor = 1.0f;    // Llama3
  float high_freq_factor = 4.0f;   // Llama3
  int64_t original_context = 8192; // Llama3: context the base model was trained at
};

struct ModelSpec {
  std::string arch;  // "llama", "mistral", "qwen2"
  std::string name;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;     // hidden size H
  int64_t n_layer = 0;
  int64_t n_head = 0;     // query heads
  int64_t n_head_kv = 0;  // key/value heads (GQA when < n_head)
  int64_t head_dim = 0;
  int64_t n_ff = 0;       // SwiGLU intermediate size H'
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int64_t rope_dim = 0;   // rotated dimensions per head (== head_dim for Llama)
  RopeStyle rope_style = RopeStyle::Normal;
  RopeScaling rope_scaling;
  bool qkv_bias = false;         // Qwen2
  bool tied_embeddings = false;  // output projection reuses token_embd

  // Mixture of experts (0 experts = dense). A MoE layer replaces the FFN with a router over
  // n_expert experts of width n_ff_expert, n_expert_used of them per token, plus n_shared_expert
  // experts every token uses. The first n_layer_dense_lead layers keep the dense FFN (DeepSeek-V3: 3).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_shared_expert = 0;
  int64_t n_ff_expert = 0;
  int64_t n_layer_dense_lead = 0;

  // Multi-head latent attention (DeepSeek; kv_lora_rank 0 = no MLA). The KV cache holds one
  // kv_lora_rank latent plus one qk_rope_head_dim key per token and layer, shared by all heads.
  // q_lora_rank 0 = queries projected straight from the hidden state.
  int64_t kv_lora_rank = 0;
  int64_t q_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
  int64_t gqa_group() const { return n_head / n_head_kv; }
  bool is_moe() const { return n_expert > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  bool is_moe_layer(int64_t layer) const { return is_moe() && layer >= n_layer_dense_lead; }
};

// Error when the shapes are inconsistent (zero sizes, heads that do not divide, ...).
void validate(const ModelSpec& spec);

}  // namespace ridge
