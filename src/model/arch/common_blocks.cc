#include "model/arch/common_blocks.h"

#include "core/error.h"

namespace ridge {

void read_common_hparams(const GgufHparams& h, ModelSpec& s) {
  s.n_layer = h.required_int("block_count");
  s.n_embd = h.required_int("embedding_length");
  s.n_ff = h.uniform_int("feed_forward_length").value_or(0);
  s.n_head = h.uniform_int("attention.head_count").value_or(0);
  s.n_head_kv = h.uniform_int("attention.head_count_kv").value_or(s.n_head);
  s.n_ctx_train = h.get_int("context_length").value_or(2048);
  s.head_dim = h.get_int("attention.key_length").value_or(s.n_head > 0 ? s.n_embd / s.n_head : 0);
  // Latent attention files describe the latent here (one KV head); the architecture reads its heads.
  const bool latent = h.get_int("attention.kv_lora_rank").has_value();
  if (const auto v = h.get_int("attention.value_length"); v && *v != s.head_dim && !latent)
    fail("value heads of {} differ from key heads of {}, which ridge does not run", *v, s.head_dim);
  s.rope_dim = h.get_int("rope.dimension_count").value_or(s.head_dim);
  s.rope_theta = float(h.get_double("rope.freq_base").value_or(10000.0));
  s.rms_eps = float(h.get_double("attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (const auto vocab = h.get_int("vocab_size")) {
    s.n_vocab = *vocab;
  } else if (const auto* tokens = h.file().find("tokenizer.ggml.tokens")) {
    s.n_vocab = int64_t(tokens->as_array("tokenizer.ggml.tokens").size());
  }
  const std::string scaling = h.get_string("rope.scaling.type").value_or("none");
  if (scaling == "linear") {
    s.rope_scaling.type = RopeScaling::Type::Linear;
    s.rope_scaling.factor = float(h.get_double("rope.scaling.factor").value_or(1.0));
  } else if (scaling == "yarn") {
    // The rest of YaRN (its ramp, its magnitude) is the architecture's to read and run.
    s.rope_scaling.type = RopeScaling::Type::Yarn;
    s.rope_scaling.factor = float(h.get_double("rope.scaling.factor").value_or(1.0));
    s.rope_scaling.original_context = h.get_int("rope.scaling.original_context_length").value_or(s.n_ctx_train);
  } else if (scaling != "none" && scaling != "") {
    fail("RoPE scaling '{}' is not supported for {}", scaling, s.arch);
  }
  s.tied_embeddings = !h.has_tensor("output.weight");
  s.qkv_bias = h.has_tensor("blk.0.attn_q.bias");
}

void read_expert_hparams(const GgufHparams& h, ModelSpec& s) {
  s.n_expert = h.get_int("expert_count").value_or(0);
  if (s.n_expert == 0) return;
  s.n_expert_used = h.required_int("expert_used_count");
  s.n_ff_expert = h.uniform_int("expert_feed_forward_length").value_or(s.n_ff);
  s.n_shared_expert = h.get_int("expert_shared_count").value_or(0);
  s.n_ff_shared = h.get_int("expert_shared_feed_forward_length").value_or(0);
  s.expert_weights_scale = float(h.get_double("expert_weights_scale").value_or(1.0));
  if (s.expert_weights_scale == 0.0f) s.expert_weights_scale = 1.0f;  // llama.cpp's "unset"
  if (s.n_ff == 0) s.n_ff = s.n_ff_expert;  // no dense layer: the field only has to be valid
}

std::string layer_prefix(int64_t l) { return "blk." + std::to_string(l) + "."; }

void bind_attention(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) {
  if (s.rope_scaling.type == RopeScaling::Type::Yarn)
    fail("YaRN RoPE scaling is not supported for {} (ridge runs it for deepseek2)", s.arch);
  const std::string p = layer_prefix(l);
  w.attn_norm = b.vector(p + "attn_norm.weight", s.n_embd);
  w.wq = b.matrix(p + "attn_q.weight", s.q_dim(), s.n_embd);
  w.wk = b.matrix(p + "attn_k.weight", s.kv_dim(), s.n_embd);
  w.wv = b.matrix(p + "attn_v.weight", s.kv_dim(), s.n_embd);
  w.bq = b.vector(p + "attn_q.bias", s.q_dim(), s.qkv_bias);
  w.bk = b.vector(p + "attn_k.bias", s.kv_dim(), s.qkv_bias);
  w.bv = b.vector(p + "attn_v.bias", s.kv_dim(), s.qkv_bias);
  if (s.qk_norm != QkNorm::None) {
    const bool whole = s.qk_norm == QkNorm::Whole;
    w.q_norm = b.vector(p + "attn_q_norm.weight", whole ? s.q_dim() : s.head_dim);
    w.k_norm = b.vector(p + "attn_k_norm.weight", whole ? s.kv_dim() : s.head_dim);
  }
  w.wo = b.matrix(p + "attn_output.weight", s.n_embd, s.q_dim());
  if (s.post_norms) w.post_attn_norm = b.vector(p + "post_attention_norm.weight", s.n_embd);
}

void bind_dense_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) {
  const std::string p = layer_prefix(l);
  w.ffn_norm = b.vector(p + "ffn_norm.weight", s.n_embd);
  w.w_gate = b.matrix(p + "ffn_gate.weight", s.n_ff, s.n_embd);
  w.w_up = b.matrix(p + "ffn_up.weight", s.n_ff, s.n_embd);
  w.w_down = b.matrix(p + "ffn_down.weight", s.n_embd, s.n_ff);
  if (s.post_norms) w.post_ffn_norm = b.vector(p + "post_ffw_norm.weight", s.n_embd);
}

void bind_moe_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) {
  const std::string p = layer_prefix(l);
  w.ffn_norm = b.vector(p + "ffn_norm.weight", s.n_embd);
  w.router = b.matrix(p + "ffn_gate_inp.weight", s.n_expert, s.n_embd);
  w.router_bias = b.vector(p + "exp_probs_b.bias", s.n_expert, /*required=*/false);
  const auto gates = b.stacked(p + "ffn_gate_exps.weight", s.n_expert, s.n_ff_expert, s.n_embd);
  const auto ups = b.stacked(p + "ffn_up_exps.weight", s.n_expert, s.n_ff_expert, s.n_embd);
  const auto downs = b.stacked(p + "ffn_down_exps.weight", s.n_expert, s.n_embd, s.n_ff_expert);
  w.experts.resize(size_t(s.n_expert));
  for (size_t e = 0; e < w.experts.size(); ++e) w.experts[e] = {gates[e], ups[e], downs[e]};
  if (s.shared_ff() > 0) {
    w.shared_gate = b.matrix(p + "ffn_gate_shexp.weight", s.shared_ff(), s.n_embd);
    w.shared_up = b.matrix(p + "ffn_up_shexp.weight", s.shared_ff(), s.n_embd);
    w.shared_down = b.matrix(p + "ffn_down_shexp.weight", s.n_embd, s.shared_ff());
  }
  if (s.shared_expert_gate) w.shared_router = b.matrix(p + "ffn_gate_inp_shexp.weight", 1, s.n_embd);
}

void bind_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) {
  if (s.is_moe_layer(l)) return bind_moe_ffn(b, s, l, w);
  bind_dense_ffn(b, s, l, w);
}

void standard_layer(LayerPass& pass, const ModelSpec& s, const LayerWeights& w, int64_t l) {
  pass.attention(w, l);
  if (s.is_moe_layer(l)) return pass.moe_ffn(w, l);
  pass.dense_ffn(w);
}

}  // namespace ridge
