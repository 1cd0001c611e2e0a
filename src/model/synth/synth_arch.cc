#include "model/synth/synth_arch.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/synth/synth_model.h"

namespace ridge::synth {
namespace {

using enum RopeStyle;

// llama.cpp's rope type per architecture (llama_model_rope_type), its tensor lists and the
// constants its graphs pass to build_moe_ffn.
const ArchRules kArchs[] = {
    {.name = "llama", .experts = Experts::Optional, .fixed_weights_norm = true, .rope_freqs_tensor = true},
    {.name = "mistral", .rope_freqs_tensor = true},  // read by ridge; llama.cpp names it "llama"
    {.name = "qwen2", .rope_style = NeoX, .qkv_bias = true},
    {.name = "qwen3", .rope_style = NeoX, .qk_norm = QkNorm::PerHead},
    {.name = "gemma3",
     .rope_style = NeoX,
     .qk_norm = QkNorm::PerHead,
     .post_norms = true,
     .activation = FfnActivation::GeGlu,
     .embedding_scale_sqrt_n_embd = true,
     .sliding_window = true},
    {.name = "qwen3moe",
     .rope_style = NeoX,
     .qk_norm = QkNorm::PerHead,
     .experts = Experts::Always,
     .expert_width_key = true,
     .fixed_weights_norm = true},
    {.name = "qwen2moe",
     .rope_style = NeoX,
     .qkv_bias = true,
     .experts = Experts::Always,
     .shared_experts = true,
     .shared_expert_gate = true,
     .expert_width_key = true,
     .fixed_weights_norm = false,
     .q_is_n_embd = true,
     .output_required = true},
    {.name = "olmoe",
     .rope_style = NeoX,
     .qk_norm = QkNorm::Whole,
     .experts = Experts::Always,
     .fixed_weights_norm = false,
     .q_is_n_embd = true,
     .output_required = true},
    {.name = "deepseek2", .experts = Experts::Always, .shared_experts = true, .expert_width_key = true, .mla = true},
};

void require(const ModelSpec& s, bool ok, std::string_view what) {
  if (!ok) fail("ridge synth: llama.cpp's {} needs {} (model '{}')", s.arch, what, s.name);
}

template <typename T>
void require(const ModelSpec& s, bool ok, std::string_view field, T want) {
  if (!ok) require(s, false, fmt::format("{} = {}", field, want));
}

const char* name_of(RopeStyle r) { return r == NeoX ? "neox" : "normal"; }
const char* name_of(QkNorm q) { return q == QkNorm::PerHead ? "per-head" : q == QkNorm::Whole ? "whole" : "none"; }
const char* name_of(FfnActivation a) { return a == FfnActivation::GeGlu ? "geglu" : "swiglu"; }

float arch_embedding_scale(const ArchRules& r, const ModelSpec& s) {
  return r.embedding_scale_sqrt_n_embd ? std::sqrt(float(s.n_embd)) : 1.0f;
}

// llama.cpp scales scores by 1 / sqrt(query head), except in Gemma 3 27B, which it knows by its
// 62 layers and scales by its n_embd / n_head.
bool gemma3_27b_scale(const ModelSpec& s) { return s.arch == "gemma3" && s.n_layer == 62; }
float llama_cpp_scores_scale(const ModelSpec& s) {
  if (gemma3_27b_scale(s)) return 1.0f / std::sqrt(float(s.n_embd / s.n_head));
  return 1.0f / std::sqrt(float(s.is_mla() ? s.qk_nope_head_dim + s.qk_rope_head_dim : s.head_dim));
}

// llama.cpp takes a 26- or 27-layer DeepSeek (or a 48-layer one with a 128256-token vocabulary)
// for a "lite" model without a query bottleneck, and does not read q_lora_rank.
bool deepseek_lite_layout(const ModelSpec& s) {
  return s.n_layer == 26 || s.n_layer == 27 || (s.n_layer == 48 && s.n_vocab == 128256);
}

void check_attention(const ModelSpec& s, const ArchRules& r) {
  require(s, s.rope_style == r.rope_style, "rope_style", name_of(r.rope_style));
  require(s, s.qk_norm == r.qk_norm, "qk_norm", name_of(r.qk_norm));
  require(s, s.post_norms == r.post_norms, "post_norms", r.post_norms);
  require(s, s.is_mla() == r.mla, r.mla ? "latent attention (kv_lora_rank > 0)" : "kv_lora_rank = 0");
  if (r.mla) {
    require(s, s.rope_dim == s.qk_rope_head_dim, "rope_dim", s.qk_rope_head_dim);
    require(s, !s.qkv_bias, "qkv_bias", false);
    if (deepseek_lite_layout(s))
      require(s, s.q_lora_rank == 0, "q_lora_rank = 0 at this depth (it reads such a model as a lite one)");
  } else {
    require(s, s.rope_dim == s.head_dim, "rope_dim (full rotary heads)", s.head_dim);
  }
  if (r.q_is_n_embd) require(s, s.q_dim() == s.n_embd, "n_head * head_dim", s.n_embd);
  // OLMoE's K norm is sized n_embd in llama.cpp, so K may not be narrower than Q.
  if (s.qk_norm == QkNorm::Whole) require(s, s.kv_dim() == s.n_embd, "n_head_kv * head_dim", s.n_embd);
  const float scale = llama_cpp_scores_scale(s);
  require(s, std::fabs(s.scores_scale() - scale) <= 1e-6f * scale, "scores scaled by", scale);
  if (!r.sliding_window) {
    require(s, s.sliding_window == 0, "sliding_window", 0);
    require(s, s.rope_theta_swa == 0.0f, "rope_theta_swa", 0);
    require(s, s.final_logit_softcap == 0.0f, "final_logit_softcap", 0);
  }
}

void check_rope_scaling(const ModelSpec& s, const ArchRules& r) {
  if (s.rope_scaling.type == RopeScaling::Type::Llama3 && !r.rope_freqs_tensor)
    fail("ridge synth: llama.cpp's {} loads no rope_freqs tensor, so it cannot have Llama 3 RoPE scaling (model '{}')",
         s.arch, s.name);
  if (!r.mla) require(s, s.rope_scaling.yarn_log_multiplier == 0.0f, "yarn_log_multiplier", 0);
}

void check_experts(const ModelSpec& s, const ArchRules& r) {
  if (r.experts == Experts::Never) require(s, !s.is_moe(), "n_expert", 0);
  if (r.experts == Experts::Always) require(s, s.is_moe(), "experts (n_expert > 0)");
  if (!s.is_moe()) return;
  require(s, (s.shared_ff() > 0) == r.shared_experts, r.shared_experts ? "shared experts" : "no shared experts");
  require(s, s.shared_expert_gate == r.shared_expert_gate, "shared_expert_gate", r.shared_expert_gate);
  if (!r.expert_width_key) require(s, s.n_ff == s.n_ff_expert, "n_ff (the expert width it reads)", s.n_ff_expert);
  if (r.fixed_weights_norm) require(s, s.expert_weights_norm == *r.fixed_weights_norm, "expert_weights_norm", *r.fixed_weights_norm);
  if (r.mla) {
    // DeepSeek's shared experts are n_shared_expert experts of the routed width.
    require(s, s.shared_ff() == s.n_shared_expert * s.n_ff_expert, "n_ff_shared", s.n_shared_expert * s.n_ff_expert);
    return;
  }
  require(s, s.expert_gating == ExpertGating::Softmax, "expert_gating", "softmax");
  require(s, s.expert_weights_scale == 1.0f, "expert_weights_scale", 1);
  require(s, s.n_layer_dense_lead == 0, "n_layer_dense_lead", 0);
}

void check_embeddings(const ModelSpec& s, const ArchRules& r) {
  require(s, s.ffn_activation == r.activation, "ffn_activation", name_of(r.activation));
  const float scale = arch_embedding_scale(r, s);
  require(s, std::fabs(s.embedding_scale - scale) <= 1e-5f * scale, "embedding_scale", scale);
  if (r.output_required) require(s, !s.tied_embeddings, "tied_embeddings", false);
}

}  // namespace

const ArchRules& arch_rules(std::string_view arch) {
  for (const ArchRules& r : kArchs)
    if (r.name == arch) return r;
  std::string names;
  for (const ArchRules& r : kArchs) names += (names.empty() ? "" : ", ") + std::string(r.name);
  fail("ridge synth writes {}, not '{}'", names, arch);
}

const std::vector<std::string>& synth_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ArchRules& r : kArchs) out.emplace_back(r.name);
    return out;
  }();
  return names;
}

void check_arch_rules(const ModelSpec& s) {
  const ArchRules& r = arch_rules(s.arch);
  check_attention(s, r);
  check_rope_scaling(s, r);
  check_experts(s, r);
  check_embeddings(s, r);
}

void apply_arch_conventions(ModelSpec& s) {
  const ArchRules& r = arch_rules(s.arch);
  s.rope_style = r.rope_style;
  s.qk_norm = r.qk_norm;
  s.post_norms = r.post_norms;
  s.ffn_activation = r.activation;
  s.embedding_scale = arch_embedding_scale(r, s);
  s.qkv_bias = r.qkv_bias;
  s.attention_scale = gemma3_27b_scale(s) ? llama_cpp_scores_scale(s) : 0.0f;
  if (r.mla) {
    // The heads after decompression, as the planner counts them: n_head query/key heads of
    // nope + rope dimensions.
    s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;
    s.n_head_kv = s.n_head;
    s.rope_dim = s.qk_rope_head_dim;
  } else {
    s.rope_dim = s.head_dim;
  }
  if (!s.is_moe()) return;
  s.shared_expert_gate = r.shared_expert_gate;
  if (r.fixed_weights_norm) s.expert_weights_norm = *r.fixed_weights_norm;
  if (!r.expert_width_key) s.n_ff = s.n_ff_expert;
}

}  // namespace ridge::synth
