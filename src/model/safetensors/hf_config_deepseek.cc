// DeepSeek-V2 / V3 configs: multi-head latent attention (q_lora_rank, kv_lora_rank, the nope / rope
// / value head widths), DeepSeek's YaRN, and routing (first_k_dense_replace dense layers, then
// n_routed_experts with n_shared_experts of the routed width; softmax or sigmoid scores,
// group-limited choice, routed_scaling_factor).
#include "core/error.h"
#include "model/safetensors/hf_config_families.h"
#include "model/safetensors/hf_json.h"

namespace ridge::hf {
namespace {

void read_latent_attention(const nlohmann::json& config, ModelSpec& s) {
  s.rope_style = RopeStyle::Normal;  // the modelling code interleaves q_pe / k_pe pairs itself
  s.q_lora_rank = int_field(config, "q_lora_rank", 0);
  s.kv_lora_rank = int_field(config, "kv_lora_rank");
  s.qk_rope_head_dim = int_field(config, "qk_rope_head_dim");
  s.qk_nope_head_dim = int_field(config, "qk_nope_head_dim");
  s.v_head_dim = int_field(config, "v_head_dim");
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.qk_nope_head_dim <= 0 || s.v_head_dim <= 0 || s.q_lora_rank < 0)
    fail("config.json: kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim and v_head_dim must be positive");
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;
  s.rope_dim = s.qk_rope_head_dim;
  s.n_head_kv = s.n_head;  // as the planner counts heads after decompression
}

void read_routing(const nlohmann::json& config, const std::string& type, ModelSpec& s) {
  s.n_expert = int_field(config, "n_routed_experts", 0);
  if (s.n_expert <= 0) fail("config.json: {} needs n_routed_experts (ridge runs DeepSeek with experts)", type);
  s.n_expert_used = int_field(config, "num_experts_per_tok");
  if (s.n_expert_used <= 0 || s.n_expert_used > s.n_expert)
    fail("config.json: num_experts_per_tok {} is not in 1..{}", s.n_expert_used, s.n_expert);
  s.n_ff_expert = int_field(config, "moe_intermediate_size");
  s.n_shared_expert = int_field(config, "n_shared_experts", 0);
  s.n_layer_dense_lead = int_field(config, "first_k_dense_replace", 0);
  if (int_field(config, "moe_layer_freq", 1) != 1) fail("config.json: moe_layer_freq other than 1 is not supported");
  const std::string scoring = string_field(config, "scoring_func", "softmax");
  if (scoring == "softmax") s.expert_gating = ExpertGating::Softmax;
  else if (scoring == "sigmoid") s.expert_gating = ExpertGating::Sigmoid;
  else fail("config.json: scoring_func '{}' is not supported (softmax, sigmoid)", scoring);
  s.expert_weights_norm = bool_field(config, "norm_topk_prob", false);
  s.expert_weights_scale = float(number_field(config, "routed_scaling_factor", 1.0));
  // DeepSeek-V2 scales the weights only when it does not renormalise them; V3 always scales.
  if (type == "deepseek_v2" && s.expert_weights_norm) s.expert_weights_scale = 1.0f;
  const std::string method = string_field(config, "topk_method", type == "deepseek_v3" ? "noaux_tc" : "greedy");
  const int64_t groups = int_field(config, "n_group", 1), used = int_field(config, "topk_group", 1);
  if (method == "noaux_tc") {
    s.n_expert_groups = groups;
    s.n_group_used = used;
  } else if (method == "group_limited_greedy") {
    // V2 ranks a group by its best expert; ridge ranks by the best two (V3): the same only for one group.
    if (groups > 1) fail("config.json: topk_method 'group_limited_greedy' with {} groups is not supported", groups);
  } else if (method != "greedy") {
    fail("config.json: topk_method '{}' is not supported (greedy, group_limited_greedy, noaux_tc)", method);
  }
}

}  // namespace

void read_deepseek_fields(const nlohmann::json& config, HfConfig& c) {
  ModelSpec& s = c.spec;
  const std::string act = string_field(config, "hidden_act", "silu");
  if (act != "silu") fail("config.json: hidden_act '{}' is not supported for {}", act, c.model_type);
  if (bool_field(config, "attention_bias", false)) fail("config.json: attention_bias is not supported for {}", c.model_type);
  s.rope_scaling = rope_scaling(config, c.model_type, /*yarn_allowed=*/true);
  read_latent_attention(config, s);
  read_routing(config, c.model_type, s);
  c.n_layer_stored = s.n_layer + int_field(config, "num_nextn_predict_layers", 0);
}

}  // namespace ridge::hf
