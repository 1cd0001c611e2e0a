// DeepSeek-V2 / V3 (GGUF deepseek2): multi-head latent attention, whose KV cache holds one
// compressed latent and one shared RoPE key per token; the first leading_dense_block_count layers
// have a dense FFN, the others route over experts (softmax or sigmoid, optionally a selection bias
// and group-limited choice, normalised and scaled weights) plus shared experts of the routed width.
// Normal (GPT-J) RoPE on the rotated part of each head, with DeepSeek's YaRN.
#include <algorithm>

#include "core/error.h"
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"
#include "model/latent_kv_split.h"

namespace ridge {
namespace {

void read_latent_heads(const GgufHparams& h, ModelSpec& s) {
  s.kv_lora_rank = h.required_int("attention.kv_lora_rank");
  s.q_lora_rank = h.get_int("attention.q_lora_rank").value_or(0);
  s.qk_rope_head_dim = s.rope_dim;
  // The converter's MLA form writes one KV head (key: latent + RoPE key, value: latent) and the
  // heads after decompression as *_mla; older files have only the decompressed heads.
  const auto key_mla = h.get_int("attention.key_length_mla"), value_mla = h.get_int("attention.value_length_mla");
  if (key_mla.has_value() != value_mla.has_value())
    fail("{} has only one of attention.key_length_mla and attention.value_length_mla", s.arch);
  if (key_mla) {
    const int64_t key = h.get_int("attention.key_length").value_or(0), value = h.get_int("attention.value_length").value_or(0);
    if (key != s.kv_lora_rank + s.qk_rope_head_dim || value != s.kv_lora_rank)
      fail("{}: attention.key_length {} / value_length {} must be kv_lora_rank + rope ({}) / kv_lora_rank ({})", s.arch,
           key, value, s.kv_lora_rank + s.qk_rope_head_dim, s.kv_lora_rank);
    s.head_dim = *key_mla;
    s.v_head_dim = *value_mla;
  } else {
    s.v_head_dim = h.get_int("attention.value_length").value_or(s.head_dim);
  }
  s.qk_nope_head_dim = s.head_dim - s.qk_rope_head_dim;
  if (s.qk_nope_head_dim <= 0)
    fail("{}: key heads of {} leave no unrotated part beside {} RoPE dimensions", s.arch, s.head_dim, s.qk_rope_head_dim);
  s.n_head_kv = s.n_head;  // as the planner counts heads after decompression
  if (h.get_double("attention.temperature_scale").value_or(0.0) != 0.0)
    fail("{}: attention temperature scaling (attention.temperature_scale) is not supported", s.arch);
}

void read_yarn(const GgufHparams& h, ModelSpec& s) {
  RopeScaling& r = s.rope_scaling;
  r.attn_factor = float(h.get_double("rope.scaling.attn_factor").value_or(1.0));
  if (r.type != RopeScaling::Type::Yarn) return;
  r.yarn_beta_fast = float(h.get_double("rope.scaling.yarn_beta_fast").value_or(32.0));
  r.yarn_beta_slow = float(h.get_double("rope.scaling.yarn_beta_slow").value_or(1.0));
  // The converter stores 0.1 x mscale_all_dim; llama.cpp divides the 0.1 back out.
  r.yarn_log_multiplier = float(h.get_double("rope.scaling.yarn_log_multiplier").value_or(0.0)) / 0.1f;
}

void read_routing(const GgufHparams& h, ModelSpec& s) {
  read_expert_hparams(h, s);
  if (!s.is_moe()) fail("{} needs {}.expert_count", s.arch, s.arch);
  s.n_layer_dense_lead = h.get_int("leading_dense_block_count").value_or(0);
  s.expert_weights_norm = h.get_bool("expert_weights_norm").value_or(false);
  switch (const int64_t gating = h.get_int("expert_gating_func").value_or(0)) {
    case 0:  // unset in DeepSeek-V2 files: softmax
    case 1: s.expert_gating = ExpertGating::Softmax; break;
    case 2: s.expert_gating = ExpertGating::Sigmoid; break;
    default: fail("{}: expert_gating_func {} is not supported (1 softmax, 2 sigmoid)", s.arch, gating);
  }
  s.n_expert_groups = h.get_int("expert_group_count").value_or(0);
  s.n_group_used = h.get_int("expert_group_used_count").value_or(0);
}

class Deepseek2 final : public Architecture {
 public:
  std::string_view name() const override { return "deepseek2"; }

  void read_hparams(const GgufHparams& h, ModelSpec& s) const override {
    s.rope_style = RopeStyle::Normal;
    // Multi-token-prediction layers follow the trunk in the file; llama.cpp's decoder runs the trunk.
    s.n_layer -= h.get_int("nextn_predict_layers").value_or(0);
    read_latent_heads(h, s);
    read_yarn(h, s);
    read_routing(h, s);
  }

  void bind_layer(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) const override {
    const std::string p = layer_prefix(l);
    w.attn_norm = b.vector(p + "attn_norm.weight", s.n_embd);
    if (s.q_lora_rank > 0) {
      w.wq_a = b.matrix(p + "attn_q_a.weight", s.q_lora_rank, s.n_embd);
      w.q_a_norm = b.vector(p + "attn_q_a_norm.weight", s.q_lora_rank);
      w.wq_b = b.matrix(p + "attn_q_b.weight", s.q_dim(), s.q_lora_rank);
    } else {
      w.wq = b.matrix(p + "attn_q.weight", s.q_dim(), s.n_embd);
    }
    w.wkv_a = b.matrix(p + "attn_kv_a_mqa.weight", s.kv_lora_rank + s.qk_rope_head_dim, s.n_embd);
    w.kv_a_norm = b.vector(p + "attn_kv_a_norm.weight", s.kv_lora_rank);
    if (b.has(p + "attn_kv_b.weight")) {
      split_kv_b(b, s, p, w);
    } else {
      w.wk_b = b.stacked(p + "attn_k_b.weight", s.n_head, s.kv_lora_rank, s.qk_nope_head_dim);
      w.wv_b = b.stacked(p + "attn_v_b.weight", s.n_head, s.v_head_dim, s.kv_lora_rank);
    }
    w.wo = b.matrix(p + "attn_output.weight", s.n_embd, s.n_head * s.v_head_dim);
    bind_ffn(b, s, l, w);
  }

  void layer(LayerPass& pass, const ModelSpec& s, const LayerWeights& w, int64_t l) const override {
    pass.latent_attention(w, l);
    if (s.is_moe_layer(l)) return pass.moe_ffn(w, l);
    pass.dense_ffn(w);
  }

 private:
  // Older files' attn_kv_b (n_head x [nope key rows; value rows], kv_lora_rank), split per head in f32.
  static void split_kv_b(TensorBinder& b, const ModelSpec& s, const std::string& p, LayerWeights& w) {
    const float* kv_b = b.f32_copy(p + "attn_kv_b.weight", s.n_head * (s.qk_nope_head_dim + s.v_head_dim), s.kv_lora_rank);
    split_latent_kv_b(kv_b, s, [&b](int64_t n) { return b.f32_storage(n); }, w);
  }
};

}  // namespace

std::unique_ptr<Architecture> make_deepseek2() { return std::make_unique<Deepseek2>(); }

}  // namespace ridge
