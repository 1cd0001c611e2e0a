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
  enum class Type { None, Linear, Llama3, Yarn };
  Type type = Type::None;
  float factor = 1.0f;             // Linear: positions divided by it; Llama3: low-frequency divisor
  float low_freq_factor = 1.0f;    // Llama3
  float high_freq_factor = 4.0f;   // Llama3
  int64_t original_context = 8192; // Llama3, Yarn: context the base model was trained at
  float yarn_beta_fast = 32.0f;    // Yarn: the ramp between interpolated and extrapolated dimensions
  float yarn_beta_slow = 1.0f;
  float yarn_log_multiplier = 0.0f;  // Yarn (DeepSeek): mscale = 1 + 0.1 * multiplier * ln(factor)
  float attn_factor = 1.0f;          // Yarn (rope.scaling.attn_factor): RoPE's cos and sin times it
};

// The FFN's gated activation: act(gate) * up.
enum class FfnActivation { SwiGlu, GeGlu };  // SiLU (Llama), GELU tanh approximation (Gemma)

// How a MoE router turns its logits into expert probabilities.
enum class ExpertGating { Softmax, Sigmoid };

// Where QK-norm normalises: each head's vector (Qwen 3, Gemma 3) or the whole projection (OLMoE).
enum class QkNorm { None, PerHead, Whole };

struct ModelSpec {
  std::string arch;  // a registered architecture (model/arch/registry.h): "llama", "qwen3", "gemma3", ...
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
  FfnActivation ffn_activation = FfnActivation::SwiGlu;
  QkNorm qk_norm = QkNorm::None;
  bool post_norms = false;       // Gemma 3: RMSNorm on each block's output before the residual add
  float embedding_scale = 1.0f;  // Gemma: token embeddings times sqrt(n_embd)
  float attention_scale = 0.0f;  // scores' factor; 0 = 1 / sqrt(head_dim)
  float final_logit_softcap = 0.0f;  // logits = c * tanh(logits / c) when > 0

  // Sliding-window attention: a layer with a window sees the last `sliding_window` positions
  // (its own included). With swa_pattern n > 0, layer l slides unless (l + 1) % n == 0 (Gemma 3:
  // five sliding layers, then one global); swa_pattern 0 with a window: every layer slides.
  int64_t sliding_window = 0;
  int64_t swa_pattern = 0;
  float rope_theta_swa = 0.0f;   // RoPE base of sliding layers (Gemma 3: 10000); 0 = rope_theta

  // Mixture of experts (0 experts = dense). A MoE layer replaces the FFN with a router over
  // n_expert experts of width n_ff_expert, n_expert_used of them per token, plus n_shared_expert
  // experts every token uses. The first n_layer_dense_lead layers keep the dense FFN (DeepSeek-V3: 3).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_shared_expert = 0;
  int64_t n_ff_expert = 0;
  int64_t n_layer_dense_lead = 0;
  int64_t n_ff_shared = 0;          // width of the shared expert(s) together; 0 = n_shared_expert * n_ff_expert
  ExpertGating expert_gating = ExpertGating::Softmax;
  bool expert_weights_norm = false;  // the chosen experts' weights divided by their sum
  float expert_weights_scale = 1.0f; // and then multiplied by this (DeepSeek's routed_scaling_factor)
  bool shared_expert_gate = false;   // Qwen2-MoE: the shared expert's output times sigmoid(x . w)
  // Group-limited routing (DeepSeek-V2/V3; 0 or 1 group = none): the experts form n_expert_groups
  // equal groups, and a token chooses only among the n_group_used groups whose two best experts
  // score highest.
  int64_t n_expert_groups = 0;
  int64_t n_group_used = 0;

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
  int64_t shared_ff() const { return n_ff_shared > 0 ? n_ff_shared : n_shared_expert * n_ff_expert; }
  // The attention window of a layer (0 = all positions) and its RoPE base.
  int64_t layer_window(int64_t layer) const {
    if (sliding_window <= 0) return 0;
    return swa_pattern > 0 && (layer + 1) % swa_pattern == 0 ? 0 : sliding_window;
  }
  float layer_rope_theta(int64_t layer) const {
    return layer_window(layer) > 0 && rope_theta_swa > 0.0f ? rope_theta_swa : rope_theta;
  }
  float scores_scale() const;  // attention_scale, or 1 / sqrt(head_dim) (the MLA head for MLA)
};

// Error when the shapes are inconsistent (zero sizes, heads that do not divide, ...).
void validate(const ModelSpec& spec);

}  // namespace ridge
