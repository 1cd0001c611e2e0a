#pragma once
// A tiny model of each architecture for tests (3 layers, 64 wide, a 320-token vocabulary; Gemma 3
// with a 5-position window; MoE models with 6 experts, 2 per token), with the conventions of its
// family applied so that llama.cpp would compute it the same way.
#include <string>

#include "model/model_spec.h"
#include "model/synth/synth_model.h"

namespace ridge {

inline ModelSpec tiny_spec(const std::string& arch) {
  ModelSpec s;
  s.arch = arch;
  s.name = "tiny " + arch;
  s.n_vocab = 320;
  s.n_embd = 64;
  s.n_layer = 3;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = 16;
  s.rope_dim = 16;
  s.n_ff = 96;
  s.n_ctx_train = 256;
  s.rope_theta = 10000.0f;
  if (arch == "gemma3") {
    s.sliding_window = 5;  // short, so the batch's later positions see only a window
    s.swa_pattern = 3;
    s.rope_theta_swa = 1000.0f;
  }
  if (arch == "mixtral" || arch == "qwen3moe" || arch == "qwen2moe" || arch == "olmoe") {
    if (arch == "mixtral") s.arch = "llama";
    if (arch == "olmoe") s.n_head_kv = s.n_head;  // OLMoE normalises q and k as one n_embd vector
    s.n_expert = 6;
    s.n_expert_used = 2;
    s.n_ff_expert = 32;
    if (arch == "qwen2moe") {
      s.n_shared_expert = 1;
      s.n_ff_shared = 48;
      s.shared_expert_gate = true;
    }
  }
  synth::apply_arch_conventions(s);
  return s;
}

// A tiny deepseek2: MLA (latent 32, RoPE 16), one dense lead layer, 6 experts (2 used) + 1 shared;
// with a query bottleneck it is V3-shaped (sigmoid router, normalised and scaled weights), without
// it V2-Lite-shaped (softmax).
inline ModelSpec tiny_deepseek2(int64_t q_lora_rank) {
  ModelSpec s;
  s.arch = "deepseek2";
  s.name = "tiny deepseek2";
  s.n_vocab = 320;
  s.n_embd = 64;
  s.n_layer = 3;
  s.n_head = 4;
  s.n_ff = 96;
  s.n_ctx_train = 2048;
  s.kv_lora_rank = 32;
  s.q_lora_rank = q_lora_rank;
  s.qk_rope_head_dim = 16;
  s.qk_nope_head_dim = 32;
  s.v_head_dim = 32;
  s.n_expert = 6;
  s.n_expert_used = 2;
  s.n_ff_expert = 32;
  s.n_shared_expert = 1;
  s.n_layer_dense_lead = 1;
  s.expert_gating = q_lora_rank > 0 ? ExpertGating::Sigmoid : ExpertGating::Softmax;
  s.expert_weights_norm = q_lora_rank > 0;
  s.expert_weights_scale = q_lora_rank > 0 ? 2.5f : 1.0f;
  // YaRN over a short original context, so its ramp and magnitude matter at these positions.
  s.rope_scaling.type = RopeScaling::Type::Yarn;
  s.rope_scaling.factor = 8.0f;
  s.rope_scaling.original_context = 128;
  s.rope_scaling.yarn_log_multiplier = 0.707f;
  synth::apply_arch_conventions(s);
  return s;
}

inline const std::string kTestArchitectures[] = {"llama", "qwen2", "qwen3", "gemma3", "mixtral", "qwen3moe", "qwen2moe", "olmoe"};

}  // namespace ridge
