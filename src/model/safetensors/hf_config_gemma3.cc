// Gemma 3 text configs: GeGLU (gelu_pytorch_tanh), embeddings times sqrt(hidden_size), QK-norm per
// head, norms after each block as well as before, scores scaled by query_pre_attn_scalar^-1/2,
// sliding-window layers (layer_types, or every sliding_window_pattern-th layer global) with their
// own RoPE base, and the final logits' softcap.
#include <cmath>

#include "core/error.h"
#include "model/safetensors/hf_config_families.h"
#include "model/safetensors/hf_json.h"

namespace ridge::hf {
namespace {

// layer_types ["sliding_attention", ..., "full_attention"] as ridge's period: global every n-th layer.
int64_t window_pattern(const nlohmann::json& config, const ModelSpec& s) {
  const nlohmann::json* types = field(config, "layer_types");
  if (!types) return int_field(config, "sliding_window_pattern", 6);
  if (!types->is_array() || int64_t(types->size()) != s.n_layer)
    fail("config.json: 'layer_types' must list the {} layers", s.n_layer);
  std::vector<bool> full;
  for (const auto& t : *types) {
    const std::string type = t.is_string() ? t.get<std::string>() : "";
    if (type != "sliding_attention" && type != "full_attention") fail("config.json: layer_types holds {}", t.dump());
    full.push_back(type == "full_attention");
  }
  int64_t pattern = 0;  // every layer slides
  for (int64_t l = 0; l < s.n_layer; ++l)
    if (full[size_t(l)]) {
      pattern = l + 1;
      break;
    }
  for (int64_t l = 0; l < s.n_layer; ++l)
    if (full[size_t(l)] != (pattern > 0 && (l + 1) % pattern == 0))
      fail("config.json: layer_types is not a repeating run of sliding layers then one full layer (layer {})", l);
  return pattern;
}

}  // namespace

void read_gemma3_fields(const nlohmann::json& config, HfConfig& c) {
  ModelSpec& s = c.spec;
  const std::string act = string_field(config, "hidden_activation", string_field(config, "hidden_act", "gelu_pytorch_tanh"));
  if (act != "gelu_pytorch_tanh") fail("config.json: hidden_activation '{}' is not supported for gemma3", act);
  if (bool_field(config, "use_bidirectional_attention", false))
    fail("config.json: use_bidirectional_attention: an embedding model (EmbeddingGemma), run by ridge embed");
  s.ffn_activation = FfnActivation::GeGlu;
  s.qk_norm = QkNorm::PerHead;
  s.post_norms = true;
  s.tied_embeddings = bool_field(config, "tie_word_embeddings", true);
  s.embedding_scale = std::sqrt(float(s.n_embd));
  if (field(config, "rope_scaling"))
    fail("config.json: rope_scaling on gemma3 (applied to its global layers only) is not supported");
  if (bool_field(config, "attention_bias", false)) fail("config.json: attention_bias is not supported for gemma3");
  if (field(config, "attn_logit_softcapping")) fail("config.json: attn_logit_softcapping is not supported");
  s.final_logit_softcap = float(number_field(config, "final_logit_softcapping", 0.0));
  const double scalar = number_field(config, "query_pre_attn_scalar", double(s.head_dim));
  if (!(scalar > 0)) fail("config.json: query_pre_attn_scalar must be positive");
  if (scalar != double(s.head_dim)) s.attention_scale = float(1.0 / std::sqrt(scalar));
  s.sliding_window = int_field(config, "sliding_window", 0);
  if (s.sliding_window > 0) {
    s.swa_pattern = window_pattern(config, s);
    s.rope_theta_swa = float(number_field(config, "rope_local_base_freq", 10000.0));
  }
}

}  // namespace ridge::hf
