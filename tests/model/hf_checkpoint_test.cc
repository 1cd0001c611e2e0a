// HF tensor names -> ridge's weights on tiny checkpoints the test writes: Mixtral's per-expert
// w1 / w3 / w2 and Qwen2-MoE's shared expert land in the right views, Gemma's norms get their +1,
// DeepSeek's kv_b_proj is split per head; tensors the config does not describe are refused by name.
#include <gtest/gtest.h>

#include <cstring>

#include "model/safetensors/load_safetensors.h"
#include "safetensors_test_files.h"

namespace ridge {
namespace {

using namespace st_test;

json config(const std::string& model_type, int layers = 1) {
  return {{"model_type", model_type}, {"vocab_size", 8},         {"hidden_size", 4},        {"num_hidden_layers", layers},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", 6}, {"tie_word_embeddings", true}};
}

// Attention and norms of layer l in Llama's names; `norm` = the value every norm weight holds.
void add_attention(std::vector<TestTensor>& t, int l, float norm = 1.0f, bool biases = false) {
  const std::string p = "model.layers." + std::to_string(l) + ".";
  t.push_back({p + "input_layernorm.weight", "F32", {4}, std::vector<float>(4, norm)});
  t.push_back({p + "self_attn.q_proj.weight", "F32", {4, 4}, iota(16, 0.1f)});
  t.push_back({p + "self_attn.k_proj.weight", "F32", {2, 4}, iota(8, 0.2f)});
  t.push_back({p + "self_attn.v_proj.weight", "F32", {2, 4}, iota(8, 0.3f)});
  t.push_back({p + "self_attn.o_proj.weight", "F32", {4, 4}, iota(16, 0.4f)});
  if (biases)
    for (auto [name, n] : {std::pair{"q", 4}, {"k", 2}, {"v", 2}})
      t.push_back({p + "self_attn." + name + "_proj.bias", "F32", {n}, iota(size_t(n), 0.0f)});
}

std::vector<TestTensor> embeddings(float norm = 1.0f) {
  return {{"model.embed_tokens.weight", "F32", {8, 4}, iota(32, -1.0f)},
          {"model.norm.weight", "F32", {4}, std::vector<float>(4, norm)}};
}

float at(const WeightRef& w, int64_t row, int64_t col) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(w.row(row)) + 4 * col, 4);
  return v;
}

Model load(const json& c, const std::vector<TestTensor>& tensors, TempDir& dir) {
  dir.write("config.json", c.dump());
  dir.write("model.safetensors", safetensors_bytes(tensors));
  return load_safetensors_model(dir.str());
}

std::vector<TestTensor> mixtral_tensors() {
  std::vector<TestTensor> t = embeddings();
  add_attention(t, 0);
  t.push_back({"model.layers.0.post_attention_layernorm.weight", "F32", {4}, iota(4, 1.0f)});
  t.push_back({"model.layers.0.block_sparse_moe.gate.weight", "F32", {2, 4}, iota(8, 0.5f)});
  for (int e = 0; e < 2; ++e) {
    const std::string x = "model.layers.0.block_sparse_moe.experts." + std::to_string(e) + ".";
    t.push_back({x + "w1.weight", "F32", {6, 4}, iota(24, 100.0f * float(e) + 1.0f)});
    t.push_back({x + "w3.weight", "F32", {6, 4}, iota(24, 100.0f * float(e) + 3.0f)});
    t.push_back({x + "w2.weight", "F32", {4, 6}, iota(24, 100.0f * float(e) + 2.0f)});
  }
  return t;
}

TEST(HfCheckpoint, MixtralExpertsBindByNumberAndRole) {
  json c = config("mixtral");
  c.update({{"num_local_experts", 2}, {"num_experts_per_tok", 1}});
  TempDir dir;
  const Model m = load(c, mixtral_tensors(), dir);
  const LayerWeights& l = m.weights.layers[0];
  ASSERT_EQ(l.experts.size(), 2u);
  EXPECT_FLOAT_EQ(at(l.experts[1].w_gate, 0, 0), 101.0f);  // w1
  EXPECT_FLOAT_EQ(at(l.experts[1].w_up, 0, 0), 103.0f);    // w3
  EXPECT_FLOAT_EQ(at(l.experts[1].w_down, 0, 0), 102.0f);  // w2
  EXPECT_EQ(l.experts[0].w_down.rows, 4);
  EXPECT_EQ(l.experts[0].w_down.cols, 6);
  EXPECT_FLOAT_EQ(at(l.router, 1, 0), 1.5f);
  EXPECT_EQ(m.weights.output.data, m.weights.token_embd.data);  // tied
}

TEST(HfCheckpoint, Qwen2MoeSharedExpertAndItsGate) {
  json c = config("qwen2_moe");
  c.update({{"num_experts", 2}, {"num_experts_per_tok", 1}, {"moe_intermediate_size", 6},
            {"shared_expert_intermediate_size", 3}});
  std::vector<TestTensor> t = embeddings();
  add_attention(t, 0, 1.0f, /*biases=*/true);
  t.push_back({"model.layers.0.post_attention_layernorm.weight", "F32", {4}, iota(4, 1.0f)});
  t.push_back({"model.layers.0.mlp.gate.weight", "F32", {2, 4}, iota(8, 0.5f)});
  for (int e = 0; e < 2; ++e)
    for (auto [role, shape] : {std::pair{"gate_proj", std::vector<int64_t>{6, 4}}, {"up_proj", {6, 4}}, {"down_proj", {4, 6}}})
      t.push_back({"model.layers.0.mlp.experts." + std::to_string(e) + "." + role + ".weight", "F32", shape, iota(24, 1.0f)});
  for (auto [role, shape] : {std::pair{"gate_proj", std::vector<int64_t>{3, 4}}, {"up_proj", {3, 4}}, {"down_proj", {4, 3}}})
    t.push_back({std::string("model.layers.0.mlp.shared_expert.") + role + ".weight", "F32", shape, iota(12, 7.0f)});
  t.push_back({"model.layers.0.mlp.shared_expert_gate.weight", "F32", {1, 4}, iota(4, 9.0f)});
  TempDir dir;
  const Model m = load(c, t, dir);
  const LayerWeights& l = m.weights.layers[0];
  EXPECT_EQ(l.shared_gate.rows, 3);
  EXPECT_EQ(l.shared_down.cols, 3);
  EXPECT_FLOAT_EQ(at(l.shared_router, 0, 3), 9.75f);
  EXPECT_TRUE(l.bq.present());

  t.pop_back();  // the shared expert's gate missing
  TempDir missing;
  expect_error([&] { load(c, t, missing); }, "missing tensor 'model.layers.0.mlp.shared_expert_gate.weight'");
}

TEST(HfCheckpoint, GemmaNormsGetTheirPlusOne) {
  json c = config("gemma3_text");
  c.update({{"head_dim", 2}, {"hidden_activation", "gelu_pytorch_tanh"}});
  std::vector<TestTensor> t = embeddings(0.25f);
  add_attention(t, 0, 0.5f);
  const std::string p = "model.layers.0.";
  for (const char* norm : {"post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"})
    t.push_back({p + norm + ".weight", "F32", {4}, std::vector<float>(4, -0.5f)});
  for (const char* norm : {"q_norm", "k_norm"}) t.push_back({p + "self_attn." + norm + ".weight", "F32", {2}, {0.0f, 2.0f}});
  t.push_back({p + "mlp.gate_proj.weight", "F32", {6, 4}, iota(24, 1.0f)});
  t.push_back({p + "mlp.up_proj.weight", "F32", {6, 4}, iota(24, 1.0f)});
  t.push_back({p + "mlp.down_proj.weight", "F32", {4, 6}, iota(24, 1.0f)});
  TempDir dir;
  const Model m = load(c, t, dir);
  const LayerWeights& l = m.weights.layers[0];
  EXPECT_FLOAT_EQ(at(m.weights.output_norm, 0, 0), 1.25f);
  EXPECT_FLOAT_EQ(at(l.attn_norm, 0, 1), 1.5f);
  EXPECT_FLOAT_EQ(at(l.post_attn_norm, 0, 2), 0.5f);  // post_attention_layernorm: the attention's output norm
  EXPECT_FLOAT_EQ(at(l.ffn_norm, 0, 0), 0.5f);
  EXPECT_FLOAT_EQ(at(l.post_ffn_norm, 0, 3), 0.5f);
  EXPECT_FLOAT_EQ(at(l.q_norm, 0, 0), 1.0f);
  EXPECT_FLOAT_EQ(at(l.k_norm, 0, 1), 3.0f);
}

TEST(HfCheckpoint, DeepseekKvBSplitPerHead) {
  json c = config("deepseek_v2");
  c.update({{"kv_lora_rank", 3}, {"qk_rope_head_dim", 2}, {"qk_nope_head_dim", 2}, {"v_head_dim", 2},
            {"n_routed_experts", 2}, {"num_experts_per_tok", 1}, {"moe_intermediate_size", 6},
            {"first_k_dense_replace", 1}, {"num_key_value_heads", 2}});
  std::vector<TestTensor> t = embeddings();
  const std::string a = "model.layers.0.self_attn.";
  t.push_back({"model.layers.0.input_layernorm.weight", "F32", {4}, std::vector<float>(4, 1.0f)});
  t.push_back({a + "q_proj.weight", "F32", {8, 4}, iota(32, 0.0f)});
  t.push_back({a + "kv_a_proj_with_mqa.weight", "F32", {5, 4}, iota(20, 0.0f)});
  t.push_back({a + "kv_a_layernorm.weight", "F32", {3}, std::vector<float>(3, 1.0f)});
  t.push_back({a + "kv_b_proj.weight", "F32", {8, 3}, iota(24, 0.0f, 1.0f)});  // value = row * 3 + col
  t.push_back({a + "o_proj.weight", "F32", {4, 4}, iota(16, 0.0f)});
  t.push_back({"model.layers.0.post_attention_layernorm.weight", "F32", {4}, std::vector<float>(4, 1.0f)});
  for (const char* role : {"gate_proj", "up_proj"}) t.push_back({std::string("model.layers.0.mlp.") + role + ".weight", "F32", {6, 4}, iota(24, 0.0f)});
  t.push_back({"model.layers.0.mlp.down_proj.weight", "F32", {4, 6}, iota(24, 0.0f)});
  TempDir dir;
  const Model m = load(c, t, dir);
  const LayerWeights& l = m.weights.layers[0];
  ASSERT_EQ(l.wk_b.size(), 2u);
  // Head 1's rows are kv_b rows 4..7: nope key rows 4, 5 then value rows 6, 7.
  EXPECT_EQ(l.wk_b[1].rows, 3);
  EXPECT_EQ(l.wk_b[1].cols, 2);
  EXPECT_FLOAT_EQ(at(l.wk_b[1], 2, 1), 5 * 3 + 2);  // absorbed (rank 2, nope 1) = kv_b[4 + 1][2]
  EXPECT_FLOAT_EQ(at(l.wv_b[1], 1, 0), 7 * 3 + 0);  // value row 1 of head 1 = kv_b[7]
  EXPECT_FLOAT_EQ(at(l.wv_b[0], 0, 2), 2 * 3 + 2);

  t.push_back({"model.layers.1.mlp.down_proj.weight", "F32", {4, 6}, iota(24, 0.0f)});
  TempDir extra;
  expect_error([&] { load(c, t, extra); }, "'model.layers.1.mlp.down_proj.weight' belongs to layer 1, but config.json has num_hidden_layers 1");
}

TEST(HfCheckpoint, UnreadTensorsAreRefusedButActivationScalesAreNot) {
  json c = config("mixtral");
  c.update({{"num_local_experts", 2}, {"num_experts_per_tok", 1}});
  std::vector<TestTensor> t = mixtral_tensors();
  t.push_back({"model.layers.0.self_attn.q_proj.input_scale", "F32", {}, {1.0f}});
  t.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {1}, {1.0f}});
  TempDir ok;
  EXPECT_NO_THROW(load(c, t, ok));
  t.push_back({"model.layers.0.self_attn.o_proj.bias", "F32", {4}, iota(4, 0.0f)});
  TempDir bias;
  expect_error([&] { load(c, t, bias); }, "'model.layers.0.self_attn.o_proj.bias' is not part of a mixtral checkpoint");
}

}  // namespace
}  // namespace ridge
