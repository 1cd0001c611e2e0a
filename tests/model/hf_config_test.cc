// config.json -> ModelSpec for every family ridge runs from HF checkpoints, and the configs it
// refuses (each error naming the field).
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/safetensors/hf_config.h"

namespace ridge {
namespace {

using nlohmann::json;

json base(const std::string& model_type) {
  return {{"model_type", model_type}, {"vocab_size", 64},       {"hidden_size", 32},          {"num_hidden_layers", 4},
          {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"intermediate_size", 48}, {"rms_norm_eps", 1e-6},
          {"rope_theta", 1e6},        {"torch_dtype", "bfloat16"}};
}

std::string error_of(const json& config) {
  try {
    hf_config_from_json(config);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const json& config, const std::string& needle) {
  const std::string message = error_of(config);
  EXPECT_NE(message.find(needle), std::string::npos) << "error '" << message << "' does not name '" << needle << "'";
}

TEST(HfConfigFamilies, MixtralIsLlamaWithRenormalisedExperts) {
  json c = base("mixtral");
  c["num_local_experts"] = 8;
  c["num_experts_per_tok"] = 2;
  c["sliding_window"] = nullptr;
  const HfConfig hf = hf_config_from_json(c);
  EXPECT_EQ(hf.spec.arch, "llama");
  EXPECT_EQ(hf.spec.n_expert, 8);
  EXPECT_EQ(hf.spec.n_expert_used, 2);
  EXPECT_EQ(hf.spec.n_ff_expert, 48);
  EXPECT_TRUE(hf.spec.expert_weights_norm);
  EXPECT_EQ(hf.spec.rope_style, RopeStyle::NeoX);
  EXPECT_EQ(hf.spec.sliding_window, 0);
}

TEST(HfConfigFamilies, Qwen2MoeSharedExpertAndLeadingDenseLayers) {
  json c = base("qwen2_moe");
  c.update({{"num_experts", 6}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 16},
            {"shared_expert_intermediate_size", 40}, {"mlp_only_layers", {0, 1}}});
  const ModelSpec s = model_spec_from_hf_config(c);
  EXPECT_EQ(s.arch, "qwen2moe");
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_TRUE(s.shared_expert_gate);
  EXPECT_EQ(s.shared_ff(), 40);
  EXPECT_EQ(s.n_ff_expert, 16);
  EXPECT_EQ(s.n_layer_dense_lead, 2);
  EXPECT_FALSE(s.expert_weights_norm);
  c["mlp_only_layers"] = {2};
  expect_refused(c, "layer 2 has a dense FFN after expert layers");
  c["mlp_only_layers"] = {9};
  expect_refused(c, "mlp_only_layers holds 9");
  c["mlp_only_layers"] = json::array();
  c["decoder_sparse_step"] = 2;  // layers 0, 2 dense: not a leading run
  expect_refused(c, "layer 2 has a dense FFN");
}

TEST(HfConfigFamilies, Qwen3MoeAndOlmoe) {
  json q = base("qwen3_moe");
  q.update({{"num_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 24}, {"norm_topk_prob", true},
            {"head_dim", 16}});
  const ModelSpec s = model_spec_from_hf_config(q);
  EXPECT_EQ(s.arch, "qwen3moe");
  EXPECT_EQ(s.qk_norm, QkNorm::PerHead);
  EXPECT_EQ(s.head_dim, 16);
  EXPECT_TRUE(s.expert_weights_norm);
  q["num_experts_per_tok"] = 9;
  expect_refused(q, "num_experts_per_tok 9");

  json o = base("olmoe");
  o.update({{"num_experts", 4}, {"num_experts_per_tok", 2}, {"clip_qkv", nullptr}});
  const ModelSpec olmoe = model_spec_from_hf_config(o);
  EXPECT_EQ(olmoe.qk_norm, QkNorm::Whole);
  EXPECT_EQ(olmoe.n_ff_expert, 48);
  EXPECT_FALSE(olmoe.expert_weights_norm);
  o["clip_qkv"] = 8.0;
  expect_refused(o, "clip_qkv");
}

TEST(HfConfigFamilies, Gemma3WindowsScalesAndNesting) {
  json c = base("gemma3_text");
  c.update({{"head_dim", 16}, {"query_pre_attn_scalar", 64}, {"sliding_window", 8}, {"rope_local_base_freq", 1e4},
            {"final_logit_softcapping", 30.0}, {"hidden_activation", "gelu_pytorch_tanh"},
            {"layer_types", {"sliding_attention", "full_attention", "sliding_attention", "full_attention"}}});
  const HfConfig hf = hf_config_from_json(c);
  const ModelSpec& s = hf.spec;
  EXPECT_EQ(s.arch, "gemma3");
  EXPECT_EQ(s.ffn_activation, FfnActivation::GeGlu);
  EXPECT_TRUE(s.post_norms);
  EXPECT_TRUE(s.tied_embeddings);
  EXPECT_FLOAT_EQ(s.embedding_scale, std::sqrt(32.0f));
  EXPECT_FLOAT_EQ(s.attention_scale, 0.125f);
  EXPECT_EQ(s.swa_pattern, 2);
  EXPECT_EQ(s.layer_window(0), 8);
  EXPECT_EQ(s.layer_window(1), 0);
  EXPECT_FLOAT_EQ(s.layer_rope_theta(0), 1e4f);
  EXPECT_FLOAT_EQ(s.layer_rope_theta(1), 1e6f);
  EXPECT_FLOAT_EQ(s.final_logit_softcap, 30.0f);
  EXPECT_EQ(hf.prefix, "model.");

  const json nested = {{"model_type", "gemma3"}, {"text_config", c}};
  const HfConfig vision = hf_config_from_json(nested);
  EXPECT_EQ(vision.spec.arch, "gemma3");
  EXPECT_EQ(vision.prefix, "language_model.model.");

  c["layer_types"] = {"sliding_attention", "full_attention", "full_attention", "sliding_attention"};
  expect_refused(c, "layer_types is not a repeating run");
  c.erase("layer_types");
  c["attn_logit_softcapping"] = 50.0;
  expect_refused(c, "attn_logit_softcapping");
  c.erase("attn_logit_softcapping");
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  expect_refused(c, "rope_scaling on gemma3");
  expect_refused({{"model_type", "gemma3"}}, "text_config");
  c.erase("rope_scaling");
  c["use_bidirectional_attention"] = true;
  expect_refused(c, "ridge embed");
}

json deepseek(const std::string& type) {
  json c = base(type);
  c.update({{"num_key_value_heads", 4}, {"q_lora_rank", nullptr}, {"kv_lora_rank", 16}, {"qk_rope_head_dim", 8},
            {"qk_nope_head_dim", 16}, {"v_head_dim", 12}, {"n_routed_experts", 8}, {"num_experts_per_tok", 2},
            {"moe_intermediate_size", 12}, {"n_shared_experts", 2}, {"first_k_dense_replace", 1},
            {"rope_scaling",
             {{"type", "yarn"}, {"factor", 40.0}, {"original_max_position_embeddings", 4096}, {"beta_fast", 32},
              {"beta_slow", 1}, {"mscale", 0.707}, {"mscale_all_dim", 0.707}}}});
  return c;
}

TEST(HfConfigFamilies, DeepseekLatentAttentionYarnAndRouting) {
  const HfConfig v2 = hf_config_from_json(deepseek("deepseek_v2"));
  const ModelSpec& s = v2.spec;
  EXPECT_EQ(s.arch, "deepseek2");
  EXPECT_EQ(s.rope_style, RopeStyle::Normal);
  EXPECT_EQ(s.q_lora_rank, 0);
  EXPECT_EQ(s.kv_lora_rank, 16);
  EXPECT_EQ(s.head_dim, 24);
  EXPECT_EQ(s.rope_dim, 8);
  EXPECT_EQ(s.v_head_dim, 12);
  EXPECT_EQ(s.shared_ff(), 24);
  EXPECT_EQ(s.n_layer_dense_lead, 1);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::Yarn);
  EXPECT_FLOAT_EQ(s.rope_scaling.factor, 40.0f);
  EXPECT_FLOAT_EQ(s.rope_scaling.yarn_log_multiplier, 0.707f);
  EXPECT_EQ(s.expert_gating, ExpertGating::Softmax);
  EXPECT_EQ(s.n_expert_groups, 0);

  json c = deepseek("deepseek_v3");
  c.update({{"q_lora_rank", 8}, {"scoring_func", "sigmoid"}, {"n_group", 4}, {"topk_group", 2}, {"norm_topk_prob", true},
            {"routed_scaling_factor", 2.5}, {"num_nextn_predict_layers", 1}});
  const HfConfig v3 = hf_config_from_json(c);
  EXPECT_EQ(v3.spec.q_lora_rank, 8);
  EXPECT_EQ(v3.spec.expert_gating, ExpertGating::Sigmoid);
  EXPECT_EQ(v3.spec.n_expert_groups, 4);
  EXPECT_EQ(v3.spec.n_group_used, 2);
  EXPECT_FLOAT_EQ(v3.spec.expert_weights_scale, 2.5f);
  EXPECT_EQ(v3.n_layer_stored, 5);

  c["rope_scaling"]["mscale"] = 1.0;
  expect_refused(c, "'mscale' differs");
  json g = deepseek("deepseek_v2");
  g.update({{"topk_method", "group_limited_greedy"}, {"n_group", 8}});
  expect_refused(g, "group_limited_greedy");
  g["topk_method"] = "random";
  expect_refused(g, "topk_method 'random'");
}

TEST(HfConfigRefusals, ModelTypesQuantizationAndFields) {
  expect_refused(base("gpt2"), "model_type 'gpt2' is not supported");
  json q = base("llama");
  q["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}};
  expect_refused(q, "quant_method 'gptq'");
  q["quantization_config"] = {{"quant_method", "fp8"}};
  EXPECT_EQ(error_of(q), "");
  json d = base("qwen3");
  d["torch_dtype"] = "int8";
  expect_refused(d, "torch_dtype 'int8'");
  json a = base("llama");
  a["hidden_act"] = "gelu";
  expect_refused(a, "hidden_act 'gelu'");
  a = base("qwen2");
  a["use_sliding_window"] = true;
  expect_refused(a, "use_sliding_window");
  a = base("llama");
  a["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  expect_refused(a, "rope_scaling type 'yarn' is not supported for llama");
  a = base("mistral");
  a["sliding_window"] = 4096;
  EXPECT_EQ(model_spec_from_hf_config(a).layer_window(3), 4096);
  a = base("mixtral");
  expect_refused(a, "num_local_experts");
  a = base("llama");
  a["num_hidden_layers"] = int64_t(1) << 40;
  expect_refused(a, "num_hidden_layers 1099511627776 is not in 1..65536");
  a["num_hidden_layers"] = "four";
  expect_refused(a, "'num_hidden_layers' must be an integer");
}

}  // namespace
}  // namespace ridge
