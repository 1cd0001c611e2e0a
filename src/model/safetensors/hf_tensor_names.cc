#include "model/safetensors/hf_tensor_names.h"

#include "model/latent_kv_split.h"

namespace ridge {
namespace {

// How a family names its FFN tensors under "model.layers.N.".
struct FfnNames {
  std::string router = "mlp.gate.weight";
  std::string experts = "mlp.experts.";              // + "E." + gate / up / down
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
  std::string shared = "mlp.shared_experts.";       // DeepSeek; Qwen2-MoE: "mlp.shared_expert."
};

FfnNames ffn_names(const std::string& model_type) {
  FfnNames n;
  if (model_type == "mixtral") {
    n.router = "block_sparse_moe.gate.weight";
    n.experts = "block_sparse_moe.experts.";
    n.gate = "w1", n.up = "w3", n.down = "w2";
  }
  if (model_type == "qwen2_moe") n.shared = "mlp.shared_expert.";
  return n;
}

class FamilyBinder {
 public:
  FamilyBinder(const HfConfig& c, HfWeightBinder& b) : c_(c), s_(c.spec), b_(b), ffn_(ffn_names(c.model_type)) {}

  void bind(ModelWeights& w) {
    const std::string& p = c_.prefix;
    w.token_embd = b_.matrix(p + "embed_tokens.weight", s_.n_vocab, s_.n_embd);
    w.output_norm = norm(p + "norm.weight", s_.n_embd);
    w.output = s_.tied_embeddings ? w.token_embd : b_.matrix(head_name(), s_.n_vocab, s_.n_embd);
    // Layer by layer, so a config claiming a billion layers fails at the first missing one.
    for (int64_t l = 0; l < s_.n_layer; ++l) {
      const std::string lp = p + "layers." + std::to_string(l) + ".";
      LayerWeights& lw = w.layers.emplace_back();
      lw.attn_norm = norm(lp + "input_layernorm.weight", s_.n_embd);
      if (s_.is_mla()) latent_attention(lp, lw);
      else attention(lp, lw);
      if (s_.post_norms) {  // Gemma: post_attention_layernorm is the attention's output norm
        lw.post_attn_norm = norm(lp + "post_attention_layernorm.weight", s_.n_embd);
        lw.ffn_norm = norm(lp + "pre_feedforward_layernorm.weight", s_.n_embd);
        lw.post_ffn_norm = norm(lp + "post_feedforward_layernorm.weight", s_.n_embd);
      } else {
        lw.ffn_norm = norm(lp + "post_attention_layernorm.weight", s_.n_embd);
      }
      if (s_.is_moe_layer(l)) moe_ffn(lp, lw);
      else dense_ffn(lp + "mlp.", s_.n_ff, lw.w_gate, lw.w_up, lw.w_down);
    }
  }

 private:
  WeightRef norm(const std::string& name, int64_t n) { return b_.vector(name, n, /*plus_one=*/s_.arch == "gemma3"); }

  // Gemma 3 with vision keeps lm_head beside the language model's prefix; the others at the top.
  std::string head_name() const {
    const std::string nested = c_.prefix.substr(0, c_.prefix.rfind("model.")) + "lm_head.weight";
    return b_.has(nested) ? nested : "lm_head.weight";
  }

  void attention(const std::string& lp, LayerWeights& w) {
    const std::string a = lp + "self_attn.";
    w.wq = b_.matrix(a + "q_proj.weight", s_.q_dim(), s_.n_embd);
    w.wk = b_.matrix(a + "k_proj.weight", s_.kv_dim(), s_.n_embd);
    w.wv = b_.matrix(a + "v_proj.weight", s_.kv_dim(), s_.n_embd);
    if (s_.qkv_bias) {
      w.bq = b_.vector(a + "q_proj.bias", s_.q_dim());
      w.bk = b_.vector(a + "k_proj.bias", s_.kv_dim());
      w.bv = b_.vector(a + "v_proj.bias", s_.kv_dim());
    }
    if (s_.qk_norm != QkNorm::None) {
      const bool whole = s_.qk_norm == QkNorm::Whole;
      w.q_norm = norm(a + "q_norm.weight", whole ? s_.q_dim() : s_.head_dim);
      w.k_norm = norm(a + "k_norm.weight", whole ? s_.kv_dim() : s_.head_dim);
    }
    w.wo = b_.matrix(a + "o_proj.weight", s_.n_embd, s_.q_dim());
  }

  void latent_attention(const std::string& lp, LayerWeights& w) {
    const std::string a = lp + "self_attn.";
    if (s_.q_lora_rank > 0) {
      w.wq_a = b_.matrix(a + "q_a_proj.weight", s_.q_lora_rank, s_.n_embd);
      w.q_a_norm = b_.vector(a + "q_a_layernorm.weight", s_.q_lora_rank);
      w.wq_b = b_.matrix(a + "q_b_proj.weight", s_.q_dim(), s_.q_lora_rank);
    } else {
      w.wq = b_.matrix(a + "q_proj.weight", s_.q_dim(), s_.n_embd);
    }
    w.wkv_a = b_.matrix(a + "kv_a_proj_with_mqa.weight", s_.kv_lora_rank + s_.qk_rope_head_dim, s_.n_embd);
    w.kv_a_norm = b_.vector(a + "kv_a_layernorm.weight", s_.kv_lora_rank);
    split_kv_b(a + "kv_b_proj.weight", w);
    w.wo = b_.matrix(a + "o_proj.weight", s_.n_embd, s_.n_head * s_.v_head_dim);
  }

  void split_kv_b(const std::string& name, LayerWeights& w) {
    const float* kv_b = b_.f32_matrix(name, s_.n_head * (s_.qk_nope_head_dim + s_.v_head_dim), s_.kv_lora_rank);
    split_latent_kv_b(kv_b, s_, [this](int64_t n) { return b_.f32_storage(n); }, w);
  }

  void dense_ffn(const std::string& m, int64_t width, WeightRef& gate, WeightRef& up, WeightRef& down) {
    gate = b_.matrix(m + ffn_.gate + ".weight", width, s_.n_embd);
    up = b_.matrix(m + ffn_.up + ".weight", width, s_.n_embd);
    down = b_.matrix(m + ffn_.down + ".weight", s_.n_embd, width);
  }

  void moe_ffn(const std::string& lp, LayerWeights& w) {
    w.router = b_.matrix(lp + ffn_.router, s_.n_expert, s_.n_embd);
    if (c_.model_type == "deepseek_v3") w.router_bias = b_.vector(lp + "mlp.gate.e_score_correction_bias", s_.n_expert);
    w.experts.resize(size_t(s_.n_expert));
    for (int64_t e = 0; e < s_.n_expert; ++e) {
      ExpertWeights& x = w.experts[size_t(e)];
      dense_ffn(lp + ffn_.experts + std::to_string(e) + ".", s_.n_ff_expert, x.w_gate, x.w_up, x.w_down);
    }
    if (s_.shared_ff() > 0) dense_ffn(lp + ffn_.shared, s_.shared_ff(), w.shared_gate, w.shared_up, w.shared_down);
    if (s_.shared_expert_gate) w.shared_router = b_.matrix(lp + "mlp.shared_expert_gate.weight", 1, s_.n_embd);
  }

  const HfConfig& c_;
  const ModelSpec& s_;
  HfWeightBinder& b_;
  FfnNames ffn_;
};

}  // namespace

void bind_hf_weights(const HfConfig& c, HfWeightBinder& b, ModelWeights& w) { FamilyBinder(c, b).bind(w); }

}  // namespace ridge
