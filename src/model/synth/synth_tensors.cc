// The tensor list of each architecture, named and shaped as llama.cpp's load_arch_tensors creates
// them (GGUF shape [cols, rows(, n_mats)] is llama.cpp's {ne0, ne1(, ne2)}).
#include <string>
#include <vector>

#include "core/error.h"
#include "model/synth/random_weights.h"
#include "model/synth/synth_arch.h"
#include "model/synth/synth_model.h"

namespace ridge::synth {
namespace {

using Fill = SynthTensor::Fill;

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// llama.cpp's quantizer keeps K types only on rows of whole super-blocks.
DType fit_type(DType type, int64_t cols) {
  if (cols % dtype_info(type).block_size == 0) return type;
  if (type == DType::Q4_K) return fit_type(DType::Q5_0, cols);
  if (type == DType::Q5_K) return fit_type(DType::Q5_1, cols);
  if (type == DType::Q6_K) return fit_type(DType::Q8_0, cols);
  if (cols % 32 == 0) return DType::Q8_0;
  return DType::F16;
}

void check_supported(const SynthOptions& o) {
  check_arch_rules(o.spec);  // first: it names what the architecture lacks (experts, a latent, ...)
  validate(o.spec);
  for (const std::optional<DType>& t : {std::optional<DType>(o.type), o.embd_type, o.output_type})
    if (t && !can_make_random(*t)) fail("ridge synth cannot make {} weights", dtype_name(*t));
}

// Appends tensors in file order; matrices get the layer type fitted to their rows.
class TensorList {
 public:
  explicit TensorList(DType layer_type) : layer_type_(layer_type) {}

  void matrix(const std::string& name, int64_t rows, int64_t cols) { typed_matrix(name, layer_type_, rows, cols); }
  void typed_matrix(const std::string& name, DType type, int64_t rows, int64_t cols) {
    tensors_.push_back({name, fit_type(type, cols), rows, cols, Fill::Random});
  }
  // n_mats matrices of rows x cols in one 3-D tensor (experts, per-head projections).
  void stacked(const std::string& name, int64_t n_mats, int64_t rows, int64_t cols) {
    tensors_.push_back({name, fit_type(layer_type_, cols), rows, cols, Fill::Random, n_mats});
  }
  // Kept in f32 whatever the layer type, as llama.cpp's quantizer keeps 1-D tensors and routers.
  void f32(const std::string& name, int64_t rows, int64_t cols, Fill fill) {
    tensors_.push_back({name, DType::F32, rows, cols, fill});
  }
  void vector(const std::string& name, int64_t n, Fill fill) { f32(name, 1, n, fill); }

  std::vector<SynthTensor> take() { return std::move(tensors_); }

 private:
  DType layer_type_;
  std::vector<SynthTensor> tensors_;
};

void add_standard_attention(TensorList& t, const std::string& p, const ModelSpec& s) {
  t.matrix(p + "attn_q.weight", s.q_dim(), s.n_embd);
  t.matrix(p + "attn_k.weight", s.kv_dim(), s.n_embd);
  t.matrix(p + "attn_v.weight", s.kv_dim(), s.n_embd);
  if (s.qkv_bias) {
    t.vector(p + "attn_q.bias", s.q_dim(), Fill::Zeros);
    t.vector(p + "attn_k.bias", s.kv_dim(), Fill::Zeros);
    t.vector(p + "attn_v.bias", s.kv_dim(), Fill::Zeros);
  }
  if (s.qk_norm != QkNorm::None) {
    const bool per_head = s.qk_norm == QkNorm::PerHead;
    t.vector(p + "attn_q_norm.weight", per_head ? s.head_dim : s.q_dim(), Fill::Ones);
    t.vector(p + "attn_k_norm.weight", per_head ? s.head_dim : s.kv_dim(), Fill::Ones);
  }
  t.matrix(p + "attn_output.weight", s.n_embd, s.q_dim());
}

// DeepSeek's latent attention in the form llama.cpp's converter writes today: kv_b split into a
// per-head attn_k_b (stored transposed, for absorbing it into the query) and attn_v_b.
void add_latent_attention(TensorList& t, const std::string& p, const ModelSpec& s) {
  const int64_t q_head = s.qk_nope_head_dim + s.qk_rope_head_dim;
  if (s.q_lora_rank > 0) {
    t.matrix(p + "attn_q_a.weight", s.q_lora_rank, s.n_embd);
    t.vector(p + "attn_q_a_norm.weight", s.q_lora_rank, Fill::Ones);
    t.matrix(p + "attn_q_b.weight", s.n_head * q_head, s.q_lora_rank);
  } else {
    t.matrix(p + "attn_q.weight", s.n_head * q_head, s.n_embd);
  }
  t.matrix(p + "attn_kv_a_mqa.weight", s.kv_lora_rank + s.qk_rope_head_dim, s.n_embd);
  t.vector(p + "attn_kv_a_norm.weight", s.kv_lora_rank, Fill::Ones);
  t.stacked(p + "attn_k_b.weight", s.n_head, s.kv_lora_rank, s.qk_nope_head_dim);
  t.stacked(p + "attn_v_b.weight", s.n_head, s.v_head_dim, s.kv_lora_rank);
  t.matrix(p + "attn_output.weight", s.n_embd, s.n_head * s.v_head_dim);
}

void add_dense_ffn(TensorList& t, const std::string& p, const std::string& suffix, int64_t n_embd, int64_t n_ff) {
  t.matrix(p + "ffn_gate" + suffix + ".weight", n_ff, n_embd);
  t.matrix(p + "ffn_up" + suffix + ".weight", n_ff, n_embd);
  t.matrix(p + "ffn_down" + suffix + ".weight", n_embd, n_ff);
}

void add_moe_ffn(TensorList& t, const std::string& p, const ModelSpec& s) {
  t.f32(p + "ffn_gate_inp.weight", s.n_expert, s.n_embd, Fill::Random);
  // DeepSeek-V3's sigmoid router adds a per-expert bias before choosing (e_score_correction_bias).
  if (s.expert_gating == ExpertGating::Sigmoid) t.vector(p + "exp_probs_b.bias", s.n_expert, Fill::Zeros);
  t.stacked(p + "ffn_gate_exps.weight", s.n_expert, s.n_ff_expert, s.n_embd);
  t.stacked(p + "ffn_up_exps.weight", s.n_expert, s.n_ff_expert, s.n_embd);
  t.stacked(p + "ffn_down_exps.weight", s.n_expert, s.n_embd, s.n_ff_expert);
  if (s.shared_ff() == 0) return;
  if (s.shared_expert_gate) t.vector(p + "ffn_gate_inp_shexp.weight", s.n_embd, Fill::Random);
  add_dense_ffn(t, p, "_shexp", s.n_embd, s.shared_ff());
}

void add_layer(TensorList& t, int64_t layer, const ModelSpec& s) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  t.vector(p + "attn_norm.weight", s.n_embd, Fill::Ones);
  if (s.is_mla()) {
    add_latent_attention(t, p, s);
  } else {
    add_standard_attention(t, p, s);
  }
  if (s.post_norms) t.vector(p + "post_attention_norm.weight", s.n_embd, Fill::Ones);
  t.vector(p + "ffn_norm.weight", s.n_embd, Fill::Ones);
  if (s.is_moe_layer(layer)) {
    add_moe_ffn(t, p, s);
  } else {
    add_dense_ffn(t, p, "", s.n_embd, s.n_ff);
  }
  if (s.post_norms) t.vector(p + "post_ffw_norm.weight", s.n_embd, Fill::Ones);
}

}  // namespace

std::vector<int64_t> SynthTensor::gguf_shape() const {
  if (n_mats > 1) return {cols, rows, n_mats};
  if (rows == 1) return {cols};
  return {cols, rows};
}

std::vector<SynthTensor> synth_tensors(const SynthOptions& o) {
  check_supported(o);
  const ModelSpec& s = o.spec;
  const DType embd = o.embd_type.value_or(is_float_type(o.type) ? o.type : DType::Q8_0);
  const DType output = o.output_type.value_or(is_float_type(o.type) || o.type == DType::Q8_0 ? o.type : DType::Q6_K);
  TensorList t(o.type);
  t.typed_matrix("token_embd.weight", embd, s.n_vocab, s.n_embd);
  t.vector("output_norm.weight", s.n_embd, Fill::Ones);
  if (!s.tied_embeddings) t.typed_matrix("output.weight", output, s.n_vocab, s.n_embd);
  if (s.rope_scaling.type == RopeScaling::Type::Llama3)
    t.vector("rope_freqs.weight", (s.rope_dim > 0 ? s.rope_dim : s.head_dim) / 2, Fill::RopeFactors);
  for (int64_t i = 0; i < s.n_layer; ++i) add_layer(t, i, s);
  std::vector<SynthTensor> tensors = t.take();
  for (const SynthTensor& x : tensors)
    if (x.cols % dtype_info(x.type).block_size != 0)
      fail("tensor '{}': {} columns do not fit {} blocks", x.name, x.cols, dtype_name(x.type));
  return tensors;
}

}  // namespace ridge::synth
