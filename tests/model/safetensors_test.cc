// safetensors and HF config loading, on small files the tests write: a single file and a sharded
// checkpoint load with the right shapes, types and values; hostile headers are refused with an
// Error that names the problem.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"
#include "model/safetensors/hf_config.h"
#include "model/safetensors/load_safetensors.h"
#include "model/safetensors/safetensors_checkpoint.h"
#include "model/safetensors/safetensors_file.h"
#include "safetensors_test_files.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace st_test;

void expect_parse_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  expect_error([&] { SafetensorsFile::parse(bytes); }, needle);
}

TEST(SafetensorsFile, ParsesDtypesShapesValuesAndMetadata) {
  const auto bytes = safetensors_bytes({{"a", "F32", {2, 3}, iota(6, -1.0f)},
                                        {"b", "F16", {4}, iota(4, 0.5f)},
                                        {"c", "BF16", {1, 2}, {1.5f, -2.0f}}},
                                       {{"format", "pt"}});
  const auto file = SafetensorsFile::parse(bytes);
  ASSERT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  const auto* a = file.find("a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->type, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->n_elements, 6);
  float a5;
  std::memcpy(&a5, a->data + 5 * 4, 4);
  EXPECT_EQ(a5, 0.25f);
  const auto* b = file.find("b");
  EXPECT_EQ(b->type, DType::F16);
  EXPECT_EQ(f16_to_f32(uint16_t(b->data[2] | b->data[3] << 8)), 0.75f);
  const auto* c = file.find("c");
  EXPECT_EQ(c->type, DType::BF16);
  EXPECT_EQ(bf16_to_f32(uint16_t(c->data[2] | c->data[3] << 8)), -2.0f);
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(SafetensorsFile, AcceptsEmptyAndZeroSizeTensors) {
  EXPECT_TRUE(SafetensorsFile::parse(raw_file("{}")).tensors().empty());
  const auto file = SafetensorsFile::parse(raw_file(R"({"z":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]}})"));
  EXPECT_EQ(file.find("z")->n_elements, 0);
}

TEST(SafetensorsFile, RejectsBadHeaderLengths) {
  expect_parse_error({1, 2, 3}, "too short");
  expect_parse_error(raw_file("{}", {}, uint64_t(1) << 40), "over the");
  expect_parse_error(raw_file("{}", {}, 1000), "past the end");
  expect_parse_error(raw_file("{}", {}, ~uint64_t(0)), "header length");
}

TEST(SafetensorsFile, RejectsMalformedJson) {
  expect_parse_error(raw_file("{\"a\":"), "not valid JSON");
  expect_parse_error(raw_file("[1,2]"), "not a JSON object");
  expect_parse_error(raw_file(R"({"a": 5})"), "'a'");
  expect_parse_error(raw_file(R"({"__metadata__": {"k": 1}})"), "__metadata__");
  expect_parse_error(raw_file(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", {0, 0, 0, 0}), "dtype");
}

TEST(SafetensorsFile, RejectsUnknownDtypesAndBadShapes) {
  const std::vector<uint8_t> four(4);
  expect_parse_error(raw_file(R"({"a":{"dtype":"F8_E5M2","shape":[4],"data_offsets":[0,4]}})", four), "F8_E5M2");
  expect_parse_error(raw_file(R"({"a":{"dtype":"Q9","shape":[4],"data_offsets":[0,4]}})", four), "not supported");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", four), "non-negative");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", four), "expected 8");
  expect_parse_error(
      raw_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}})", four),
      "absurdly large");
}

TEST(SafetensorsFile, RejectsBadOffsets) {
  const std::vector<uint8_t> eight(8);
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,12]}})", eight), "outside");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", eight), "outside");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", eight), "data_offsets");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", eight), "data_offsets");
  // Two tensors sharing bytes, a hole, bytes left over.
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              eight),
                     "overlap");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight), "hole");
  expect_parse_error(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight), "cover 4 of the 8");
}

// --- config.json ---

json tiny_config() {
  return {{"model_type", "llama"},       {"hidden_size", 4},     {"num_hidden_layers", 2},
          {"num_attention_heads", 2},    {"num_key_value_heads", 1}, {"intermediate_size", 6},
          {"vocab_size", 8},             {"max_position_embeddings", 128}, {"rms_norm_eps", 1e-5},
          {"rope_theta", 500000.0},      {"tie_word_embeddings", false}, {"hidden_act", "silu"}};
}

TEST(HfConfig, LlamaFieldsMapToTheSpec) {
  const ModelSpec s = model_spec_from_hf_config(tiny_config());
  EXPECT_EQ(s.arch, "llama");
  EXPECT_EQ(s.n_embd, 4);
  EXPECT_EQ(s.n_layer, 2);
  EXPECT_EQ(s.n_head, 2);
  EXPECT_EQ(s.n_head_kv, 1);
  EXPECT_EQ(s.head_dim, 2);
  EXPECT_EQ(s.rope_dim, 2);
  EXPECT_EQ(s.n_ff, 6);
  EXPECT_EQ(s.n_vocab, 8);
  EXPECT_EQ(s.n_ctx_train, 128);
  EXPECT_FLOAT_EQ(s.rms_eps, 1e-5f);
  EXPECT_FLOAT_EQ(s.rope_theta, 500000.0f);
  EXPECT_EQ(s.rope_style, RopeStyle::NeoX);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::None);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_FALSE(s.tied_embeddings);
}

TEST(HfConfig, RopeScalingHeadDimAndQwenBias) {
  json c = tiny_config();
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  ModelSpec s = model_spec_from_hf_config(c);
  EXPECT_EQ(s.rope_scaling.type, RopeScaling::Type::Llama3);
  EXPECT_FLOAT_EQ(s.rope_scaling.factor, 8.0f);
  EXPECT_EQ(s.rope_scaling.original_context, 8192);
  c["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(model_spec_from_hf_config(c).rope_scaling.type, RopeScaling::Type::Linear);

  c = tiny_config();
  c["model_type"] = "mistral";
  c["head_dim"] = nullptr;  // Mistral writes null: derived from hidden_size
  EXPECT_EQ(model_spec_from_hf_config(c).head_dim, 2);
  c["head_dim"] = 4;
  EXPECT_EQ(model_spec_from_hf_config(c).q_dim(), 8);

  c = tiny_config();
  c["model_type"] = "qwen2";
  c["tie_word_embeddings"] = true;
  s = model_spec_from_hf_config(c);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_TRUE(s.tied_embeddings);
}

TEST(HfConfig, ErrorsNameTheField) {
  auto without = [](const char* key) {
    json c = tiny_config();
    c.erase(key);
    return c;
  };
  expect_error([&] { model_spec_from_hf_config(without("hidden_size")); }, "hidden_size");
  expect_error([&] { model_spec_from_hf_config(without("vocab_size")); }, "vocab_size");
  json c = tiny_config();
  c["model_type"] = "gpt2";
  expect_error([&] { model_spec_from_hf_config(c); }, "gpt2");
  c = tiny_config();
  c["num_hidden_layers"] = "two";
  expect_error([&] { model_spec_from_hf_config(c); }, "num_hidden_layers");
  c = tiny_config();
  c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  expect_error([&] { model_spec_from_hf_config(c); }, "yarn");
  c = tiny_config();
  c["attention_bias"] = true;
  expect_error([&] { model_spec_from_hf_config(c); }, "attention_bias");
  c = tiny_config();
  c["num_key_value_heads"] = 3;  // 2 % 3 != 0
  expect_error([&] { model_spec_from_hf_config(c); }, "n_head_kv");
}

// --- whole checkpoints ---

// Every tensor of the tiny config, values distinct per tensor; norms in BF16 to test conversion.
std::vector<TestTensor> tiny_tensors(const std::string& matrix_dtype, bool with_lm_head) {
  std::vector<TestTensor> t;
  t.push_back({"model.embed_tokens.weight", matrix_dtype, {8, 4}, iota(32, -4.0f)});
  t.push_back({"model.norm.weight", "BF16", {4}, iota(4, 1.0f)});
  if (with_lm_head) t.push_back({"lm_head.weight", matrix_dtype, {8, 4}, iota(32, 2.0f)});
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const float base = float(10 * i);
    t.push_back({p + "input_layernorm.weight", "BF16", {4}, iota(4, base + 0.5f)});
    t.push_back({p + "self_attn.q_proj.weight", matrix_dtype, {4, 4}, iota(16, base + 1.0f)});
    t.push_back({p + "self_attn.k_proj.weight", matrix_dtype, {2, 4}, iota(8, base + 2.0f)});
    t.push_back({p + "self_attn.v_proj.weight", matrix_dtype, {2, 4}, iota(8, base + 3.0f)});
    t.push_back({p + "self_attn.o_proj.weight", matrix_dtype, {4, 4}, iota(16, base + 4.0f)});
    t.push_back({p + "post_attention_layernorm.weight", "F32", {4}, iota(4, base + 5.0f)});
    t.push_back({p + "mlp.gate_proj.weight", matrix_dtype, {6, 4}, iota(24, base + 6.0f)});
    t.push_back({p + "mlp.up_proj.weight", matrix_dtype, {6, 4}, iota(24, base + 7.0f)});
    t.push_back({p + "mlp.down_proj.weight", matrix_dtype, {4, 6}, iota(24, base + 8.0f)});
  }
  return t;
}

float f32_at(const WeightRef& w, int64_t row, int64_t col) {
  const uint8_t* p = static_cast<const uint8_t*>(w.row(row));
  if (w.type == DType::F32) {
    float v;
    std::memcpy(&v, p + 4 * col, 4);
    return v;
  }
  const uint16_t bits = uint16_t(p[2 * col] | p[2 * col + 1] << 8);
  return w.type == DType::F16 ? f16_to_f32(bits) : bf16_to_f32(bits);
}

TEST(LoadSafetensors, SingleFileModel) {
  TempDir dir;
  dir.write("config.json", tiny_config().dump());
  dir.write("model.safetensors", safetensors_bytes(tiny_tensors("BF16", true)));
  const Model m = load_safetensors_model(dir.str());
  EXPECT_EQ(m.spec.rope_style, RopeStyle::NeoX);
  const auto& w = m.weights;
  EXPECT_EQ(w.token_embd.type, DType::BF16);
  EXPECT_EQ(w.token_embd.rows, 8);
  EXPECT_EQ(w.token_embd.cols, 4);
  EXPECT_EQ(f32_at(w.token_embd, 1, 2), -4.0f + 0.25f * 6);  // row-major [out, in]
  EXPECT_EQ(f32_at(w.output, 0, 0), 2.0f);
  ASSERT_EQ(w.layers.size(), 2u);
  const auto& l1 = w.layers[1];
  EXPECT_EQ(l1.wk.rows, 2);
  EXPECT_EQ(l1.wk.cols, 4);
  EXPECT_EQ(f32_at(l1.wk, 1, 3), 12.0f + 0.25f * 7);
  EXPECT_EQ(l1.w_down.rows, 4);
  EXPECT_EQ(l1.w_down.cols, 6);
  EXPECT_EQ(f32_at(l1.w_down, 3, 5), 18.0f + 0.25f * 23);
  // Norms become f32 whatever they were stored as.
  EXPECT_EQ(l1.attn_norm.type, DType::F32);
  EXPECT_EQ(f32_at(l1.attn_norm, 0, 3), 10.5f + 0.75f);
  EXPECT_EQ(f32_at(l1.ffn_norm, 0, 1), 15.25f);
  EXPECT_EQ(f32_at(w.output_norm, 0, 2), 1.5f);
  EXPECT_FALSE(l1.bq.present());
}

TEST(LoadSafetensors, ShardedQwenWithTiedEmbeddingsAndBiases) {
  TempDir dir;
  json config = tiny_config();
  config["model_type"] = "qwen2";
  config["tie_word_embeddings"] = true;
  dir.write("config.json", config.dump());
  auto tensors = tiny_tensors("F16", false);
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    tensors.push_back({p + "q_proj.bias", "F16", {4}, iota(4, 0.5f)});
    tensors.push_back({p + "k_proj.bias", "F32", {2}, iota(2, 1.5f)});
    tensors.push_back({p + "v_proj.bias", "BF16", {2}, iota(2, 2.5f)});
  }
  const size_t half = tensors.size() / 2;
  const std::vector<TestTensor> first(tensors.begin(), tensors.begin() + long(half)),
      second(tensors.begin() + long(half), tensors.end());
  dir.write("model-00001-of-00002.safetensors", safetensors_bytes(first));
  dir.write("model-00002-of-00002.safetensors", safetensors_bytes(second));
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  for (const auto& t : first) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const auto& t : second) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  dir.write("model.safetensors.index.json", index.dump());

  const Model m = load_safetensors_model(dir.str());
  EXPECT_TRUE(m.spec.qkv_bias);
  EXPECT_EQ(m.weights.output.data, m.weights.token_embd.data);  // tied
  EXPECT_EQ(m.weights.token_embd.type, DType::F16);
  const auto& l1 = m.weights.layers[1];
  EXPECT_EQ(f32_at(l1.bq, 0, 3), 1.25f);
  EXPECT_EQ(f32_at(l1.bk, 0, 1), 1.75f);
  EXPECT_EQ(f32_at(l1.bv, 0, 0), 2.5f);
  EXPECT_EQ(f32_at(l1.w_up, 5, 3), 17.0f + 0.25f * 23);

  // The index must not point outside the directory, nor at a shard missing the tensor.
  index["weight_map"]["model.norm.weight"] = "../model-00001-of-00002.safetensors";
  dir.write("model.safetensors.index.json", index.dump());
  expect_error([&] { load_safetensors_model(dir.str()); }, "not a file name");
  index["weight_map"]["model.norm.weight"] = "model-00002-of-00002.safetensors";
  index["weight_map"]["model.embed_tokens.weight"] = "model-00002-of-00002.safetensors";
  dir.write("model.safetensors.index.json", index.dump());
  expect_error([&] { load_safetensors_model(dir.str()); }, "does not hold it");
}

TEST(LoadSafetensors, ErrorsNameTheTensor) {
  TempDir dir;
  dir.write("config.json", tiny_config().dump());
  expect_error([&] { load_safetensors_model(dir.str()); }, "neither model.safetensors");

  dir.write("model.safetensors", safetensors_bytes(tiny_tensors("F32", false)));
  expect_error([&] { load_safetensors_model(dir.str()); }, "lm_head.weight");

  auto tensors = tiny_tensors("F32", true);
  tensors[4].shape = {2, 8};  // layer 0 q_proj with the right size, wrong shape
  dir.write("model.safetensors", safetensors_bytes(tensors));
  expect_error([&] { load_safetensors_model(dir.str()); }, "model.layers.0.self_attn.q_proj.weight");

  TempDir no_config;
  expect_error([&] { load_safetensors_model(no_config.str()); }, "config.json");
}

}  // namespace
}  // namespace ridge
