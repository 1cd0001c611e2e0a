// The experts of mixtral, qwen2_moe, qwen3_moe and olmoe configs: how many, how wide, how many per
// token, whether the chosen weights are renormalised, and which layers keep a dense FFN.
#include "core/error.h"
#include "model/safetensors/hf_config_families.h"
#include "model/safetensors/hf_json.h"

namespace ridge::hf {
namespace {

// Qwen's decoder_sparse_step / mlp_only_layers: ridge runs dense layers only as a leading run.
int64_t leading_dense_layers(const nlohmann::json& config, const ModelSpec& s) {
  const int64_t step = int_field(config, "decoder_sparse_step", 1);
  if (step <= 0) fail("config.json: decoder_sparse_step must be positive, got {}", step);
  std::vector<bool> dense(size_t(s.n_layer), false);
  for (int64_t l = 0; l < s.n_layer; ++l) dense[size_t(l)] = (l + 1) % step != 0;
  if (const nlohmann::json* only = field(config, "mlp_only_layers")) {
    if (!only->is_array()) fail("config.json: 'mlp_only_layers' must be an array");
    for (const auto& v : *only) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= s.n_layer)
        fail("config.json: mlp_only_layers holds {}, not a layer of 0..{}", v.dump(), s.n_layer - 1);
      dense[size_t(v.get<int64_t>())] = true;
    }
  }
  int64_t lead = 0;
  while (lead < s.n_layer && dense[size_t(lead)]) ++lead;
  for (int64_t l = lead; l < s.n_layer; ++l)
    if (dense[size_t(l)])
      fail("config.json: layer {} has a dense FFN after expert layers (decoder_sparse_step / mlp_only_layers); ridge "
           "runs dense layers only before the first expert layer", l);
  return lead;
}

}  // namespace

void read_moe_fields(const nlohmann::json& config, HfConfig& c) {
  ModelSpec& s = c.spec;
  const std::string& t = c.model_type;
  if (t == "mixtral") {
    s.n_expert = int_field(config, "num_local_experts");
    s.n_ff_expert = s.n_ff;
    s.expert_weights_norm = true;  // Mixtral always renormalises the top-k
  } else if (t == "qwen2_moe" || t == "qwen3_moe" || t == "olmoe") {
    s.n_expert = int_field(config, "num_experts");
    s.n_ff_expert = t == "olmoe" ? s.n_ff : int_field(config, "moe_intermediate_size");
    s.expert_weights_norm = bool_field(config, "norm_topk_prob", false);
    if (t != "olmoe") s.n_layer_dense_lead = leading_dense_layers(config, s);
    if (t == "qwen2_moe") {
      s.n_shared_expert = 1;
      s.n_ff_shared = int_field(config, "shared_expert_intermediate_size");
      s.shared_expert_gate = true;
    }
  } else {
    return;  // dense
  }
  if (s.n_expert <= 0) fail("config.json: {} needs a positive expert count, got {}", t, s.n_expert);
  s.n_expert_used = int_field(config, "num_experts_per_tok");
  if (s.n_expert_used <= 0 || s.n_expert_used > s.n_expert)
    fail("config.json: num_experts_per_tok {} is not in 1..{}", s.n_expert_used, s.n_expert);
}

}  // namespace ridge::hf
