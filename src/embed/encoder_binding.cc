// The encoder's tensors by name, once for every file layout: GGUF's names are the canonical ones and
// Hugging Face's are derived from them.
#include <array>
#include <utility>

#include "core/error.h"
#include "embed/encoder_model.h"

namespace ridge {
namespace {

// GGUF tensor (without .weight / .bias) -> Hugging Face module, per layer and for the embeddings.
constexpr std::array<std::pair<const char*, const char*>, 8> kLayerModules = {{
    {"attn_q", "attention.self.query"},
    {"attn_k", "attention.self.key"},
    {"attn_v", "attention.self.value"},
    {"attn_output", "attention.output.dense"},
    {"attn_output_norm", "attention.output.LayerNorm"},
    {"ffn_up", "intermediate.dense"},
    {"ffn_down", "output.dense"},
    {"layer_output_norm", "output.LayerNorm"},
}};
constexpr std::array<std::pair<const char*, const char*>, 4> kEmbeddingModules = {{
    {"token_embd", "embeddings.word_embeddings"},
    {"position_embd", "embeddings.position_embeddings"},
    {"token_types", "embeddings.token_type_embeddings"},
    {"token_embd_norm", "embeddings.LayerNorm"},
}};

}  // namespace

std::string bert_hf_name(const std::string& name) {
  const size_t dot = name.rfind('.');
  const std::string base = name.substr(0, dot), suffix = name.substr(dot);  // ".weight" / ".bias"
  for (const auto& [gguf, hf] : kEmbeddingModules)
    if (base == gguf) return hf + suffix;
  if (base.rfind("blk.", 0) == 0) {
    const size_t end = base.find('.', 4);
    const std::string layer = base.substr(4, end - 4), tensor = base.substr(end + 1);
    for (const auto& [gguf, hf] : kLayerModules)
      if (tensor == gguf) return "encoder.layer." + layer + "." + hf + suffix;
  }
  fail("no Hugging Face name for tensor '{}'", name);
}

void bind_encoder_weights(const EncoderSpec& s, EncoderWeights& w,
                          const std::function<WeightRef(const std::string&, int64_t, int64_t)>& matrix,
                          const std::function<WeightRef(const std::string&, int64_t)>& vector) {
  w.token_embd = matrix("token_embd.weight", s.n_vocab, s.n_embd);
  w.position_embd = matrix("position_embd.weight", s.n_positions, s.n_embd);
  if (s.n_token_types > 0) w.token_types = matrix("token_types.weight", s.n_token_types, s.n_embd);
  w.embd_norm = vector("token_embd_norm.weight", s.n_embd);
  w.embd_norm_b = vector("token_embd_norm.bias", s.n_embd);
  w.layers.resize(size_t(s.n_layer));
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    EncoderLayerWeights& l = w.layers[size_t(i)];
    // (weight, bias) of a linear layer, (n_out, n_in).
    const auto linear = [&](const char* name, WeightRef& weight, WeightRef& bias, int64_t n_out, int64_t n_in) {
      weight = matrix(p + name + ".weight", n_out, n_in);
      bias = vector(p + name + ".bias", n_out);
    };
    const auto norm = [&](const char* name, WeightRef& weight, WeightRef& bias) {
      weight = vector(p + name + ".weight", s.n_embd);
      bias = vector(p + name + ".bias", s.n_embd);
    };
    linear("attn_q", l.wq, l.bq, s.n_embd, s.n_embd);
    linear("attn_k", l.wk, l.bk, s.n_embd, s.n_embd);
    linear("attn_v", l.wv, l.bv, s.n_embd, s.n_embd);
    linear("attn_output", l.wo, l.bo, s.n_embd, s.n_embd);
    norm("attn_output_norm", l.attn_norm, l.attn_norm_b);
    linear("ffn_up", l.w_up, l.b_up, s.n_ff, s.n_embd);
    linear("ffn_down", l.w_down, l.b_down, s.n_embd, s.n_ff);
    norm("layer_output_norm", l.ffn_norm, l.ffn_norm_b);
  }
}

}  // namespace ridge
