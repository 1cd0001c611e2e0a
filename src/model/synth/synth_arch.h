#pragma once
// What llama.cpp's loader and graph of each architecture fix (src/models/<arch>.cpp in llama.cpp):
// the tensors it requires and the choices it hard-codes instead of reading from the file. The
// writer follows these rules, and a spec that contradicts them is refused, since llama.cpp would
// either not load the file or compute a different model than the spec describes.
#include <optional>
#include <string_view>

#include "model/model_spec.h"

namespace ridge::synth {

enum class Experts { Never, Optional, Always };

struct ArchRules {
  std::string_view name;
  RopeStyle rope_style = RopeStyle::Normal;
  QkNorm qk_norm = QkNorm::None;
  bool post_norms = false;                          // post_attention_norm + post_ffw_norm (gemma3)
  FfnActivation activation = FfnActivation::SwiGlu;
  bool embedding_scale_sqrt_n_embd = false;         // the graph scales embeddings by sqrt(n_embd) (gemma3)
  bool qkv_bias = false;                            // the converter writes q/k/v biases (qwen2, qwen2moe)
  Experts experts = Experts::Never;
  bool shared_experts = false;                      // ffn_*_shexp are required (qwen2moe, deepseek2)
  bool shared_expert_gate = false;                  // ffn_gate_inp_shexp (qwen2moe)
  bool expert_width_key = false;                    // reads expert_feed_forward_length; else n_ff is the width
  std::optional<bool> fixed_weights_norm = std::nullopt;  // the graph's constant; nullopt: read from the file
  bool q_is_n_embd = false;                         // attn_q is sized n_embd x n_embd (qwen2moe, olmoe)
  bool output_required = false;                     // output.weight must exist: no tied embeddings
  bool mla = false;                                 // latent attention, leading dense layers, gating keys (deepseek2)
  bool sliding_window = false;                      // reads the sliding-window keys and the logit softcap (gemma3)
  bool rope_freqs_tensor = false;                   // loads rope_freqs.weight (Llama 3 scaling)
};

// The rules of `arch`; Error when ridge synth cannot write it.
const ArchRules& arch_rules(std::string_view arch);

// Error naming the first field of `spec` that contradicts the rules of its architecture.
void check_arch_rules(const ModelSpec& spec);

}  // namespace ridge::synth
