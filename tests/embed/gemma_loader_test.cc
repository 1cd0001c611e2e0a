// A bidirectional Gemma directory as Hugging Face writes it (config.json, model.safetensors,
// tokenizer.model, tokenizer.json's post-processor), tiny and written here: loaded through
// EmbeddingModel into tokens and vectors; norms held as 1 + w; transformers' reading of the window;
// configs that disagree with the tensors or ask for what ridge does not run refused by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../tokenizer/sentencepiece_writer.h"
#include "core/error.h"
#include "embed/embedding_model.h"
#include "embed/gemma_model.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json tiny_config() {
  return {{"model_type", "gemma3_text"},
          {"use_bidirectional_attention", true},
          {"hidden_activation", "gelu_pytorch_tanh"},
          {"vocab_size", 300},
          {"hidden_size", 8},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"head_dim", 4},
          {"num_hidden_layers", 2},
          {"intermediate_size", 12},
          {"max_position_embeddings", 64},
          {"sliding_window", 8},
          {"layer_types", {"sliding_attention", "full_attention"}},
          {"rope_theta", 1e6},
          {"rope_local_base_freq", 1e4},
          {"query_pre_attn_scalar", 4},
          {"rms_norm_eps", 1e-6},
          {"attention_bias", false},
          {"rope_scaling", nullptr}};
}

// Tensor name -> shape, Gemma3TextModel's names for the config above.
std::vector<std::pair<std::string, std::vector<int64_t>>> tiny_tensors(int64_t vocab = 300) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> t = {{"embed_tokens.weight", {vocab, 8}},
                                                                 {"norm.weight", {8}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    for (auto [name, shape] :
         std::vector<std::pair<std::string, std::vector<int64_t>>>{{"input_layernorm.weight", {8}},
                                                                   {"self_attn.q_proj.weight", {8, 8}},
                                                                   {"self_attn.k_proj.weight", {4, 8}},
                                                                   {"self_attn.v_proj.weight", {4, 8}},
                                                                   {"self_attn.q_norm.weight", {4}},
                                                                   {"self_attn.k_norm.weight", {4}},
                                                                   {"self_attn.o_proj.weight", {8, 8}},
                                                                   {"post_attention_layernorm.weight", {8}},
                                                                   {"pre_feedforward_layernorm.weight", {8}},
                                                                   {"mlp.gate_proj.weight", {12, 8}},
                                                                   {"mlp.up_proj.weight", {12, 8}},
                                                                   {"mlp.down_proj.weight", {8, 12}},
                                                                   {"post_feedforward_layernorm.weight", {8}}})
      t.emplace_back(p + name, shape);
  }
  return t;
}

void write_safetensors(const fs::path& path, const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  json header = json::object();
  std::string data;
  for (const auto& [name, shape] : tensors) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + size_t(n) * 4}}};
    for (int64_t i = 0; i < n; ++i) {
      const float v = normal(rng);
      data.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  std::string h = header.dump();
  h.resize((h.size() + 7) / 8 * 8, ' ');
  std::ofstream out(path, std::ios::binary);
  const uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << h << data;
}

json gemma_post_processor() {
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
            {{"SpecialToken", {{"id", "<eos>"}, {"type_id", 0}}}}}}};
}

struct TinyGemmaDir {
  fs::path dir;
  TinyGemmaDir(const json& config = tiny_config(), const json& post_processor = gemma_post_processor(),
               const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors = tiny_tensors()) {
    static int counter = 0;
    dir = fs::temp_directory_path() / ("ridge_gemma_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << config.dump();
    std::ofstream(dir / "tokenizer.json")
        << json{{"version", "1.0"}, {"post_processor", post_processor}, {"model", {{"type", "BPE"}}}}.dump();
    std::ofstream(dir / "tokenizer.model", std::ios::binary) << testing::tiny_gemma_sp_model().bytes();
    write_safetensors(dir / "model.safetensors", tensors);
  }
  ~TinyGemmaDir() { fs::remove_all(dir); }
};

std::string load_error(const TinyGemmaDir& d) {
  try {
    EmbeddingModel::load(d.dir.string(), 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GemmaLoader, LoadsADirectoryIntoTokensAndVectors) {
  TinyGemmaDir d;
  auto model = EmbeddingModel::load(d.dir.string(), 2);
  EXPECT_EQ(model->shape().arch, "gemma3");
  EXPECT_EQ(model->dimensions(), 8);  // no modules.json: mean pooling, the encoder's width
  const EmbeddingInput in = model->prepare("Hello world", "", true);
  ASSERT_EQ(in.ids.size(), 4u);
  EXPECT_EQ(in.ids.front(), 2);
  EXPECT_EQ(in.ids.back(), 1);
  const EmbeddingTokenizer& t = model->tokenizer();
  EXPECT_EQ(t.encode("Hello world", true, 3), (std::vector<int32_t>{2, in.ids[1], 1}));  // cut inside, specials kept
  EXPECT_EQ(t.encode("Hello world", true, 2), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(t.encode("Hello world", false, 1), (std::vector<int32_t>{in.ids[1]}));
  std::vector<int32_t> ids, types;
  EXPECT_THROW(t.encode_pair("a", "b", 0, ids, types), Error);
  EXPECT_THROW(model->prepare_pair("a", "b"), Error);
  std::vector<float> vectors;
  const std::vector<EmbeddingInput> inputs{in, model->prepare("Hello", "", true)};
  model->embed(inputs, vectors);
  ASSERT_EQ(vectors.size(), 16u);
  for (float v : vectors) EXPECT_TRUE(std::isfinite(v));
}

TEST(GemmaLoader, NormsHoldOnePlusWAndTheWindowIsTransformers) {
  TinyGemmaDir d;
  const GemmaEncoderModel m = load_gemma_safetensors(d.dir.string());
  EXPECT_EQ(m.spec.sliding_window, 5);  // 8 / 2 + 1: |i - j| < 5
  EXPECT_EQ(m.spec.sliding, (std::vector<bool>{true, false}));
  EXPECT_FLOAT_EQ(m.spec.attention_scale, 0.5f);
  std::ifstream in(d.dir / "model.safetensors", std::ios::binary);
  uint64_t len = 0;
  in.read(reinterpret_cast<char*>(&len), 8);
  std::string header(len, ' ');
  in.read(header.data(), std::streamsize(len));
  const json h = json::parse(header);
  in.seekg(std::streamoff(8 + len + h["norm.weight"]["data_offsets"][0].get<uint64_t>()));
  float w0 = 0.0f;
  in.read(reinterpret_cast<char*>(&w0), 4);
  EXPECT_EQ(static_cast<const float*>(m.weights.output_norm.data)[0], 1.0f + w0);
}

TEST(GemmaLoader, RefusesConfigsItCannotRun) {
  const auto with = [](const char* key, const json& value) {
    json c = tiny_config();
    c[key] = value;
    return load_error(TinyGemmaDir(c));
  };
  EXPECT_NE(with("use_bidirectional_attention", false).find("use_bidirectional_attention"), std::string::npos);
  EXPECT_NE(with("hidden_activation", "gelu").find("hidden_activation"), std::string::npos);
  EXPECT_NE(with("attn_logit_softcapping", 50.0).find("attn_logit_softcapping"), std::string::npos);
  EXPECT_NE(with("rope_scaling", json{{"rope_type", "linear"}, {"factor", 8.0}}).find("rope_scaling"),
            std::string::npos);
  EXPECT_NE(with("layer_types", json{"sliding_attention"}).find("layer_types"), std::string::npos);
  EXPECT_NE(with("layer_types", json{"sliding_attention", "chunked"}).find("layer_types[1]"), std::string::npos);
  EXPECT_NE(with("num_key_value_heads", 3).find("KV heads"), std::string::npos);
  EXPECT_NE(with("head_dim", -4).find("head_dim"), std::string::npos);
  EXPECT_NE(with("vocab_size", "many").find("vocab_size"), std::string::npos);
  // The config disagrees with the tensors: the tensor and both shapes named.
  EXPECT_NE(with("hidden_size", 16).find("embed_tokens.weight"), std::string::npos);
  EXPECT_NE(with("intermediate_size", 10).find("mlp.gate_proj.weight"), std::string::npos);
  json deeper = tiny_config();
  deeper["num_hidden_layers"] = 3;
  deeper["layer_types"].push_back("sliding_attention");
  EXPECT_NE(load_error(TinyGemmaDir(deeper)).find("layers.2.input_layernorm.weight"), std::string::npos);
  // The tokenizer's pieces do not fit the embeddings.
  json small = tiny_config();
  small["vocab_size"] = 200;
  EXPECT_NE(load_error(TinyGemmaDir(small, gemma_post_processor(), tiny_tensors(200))).find("tokenizer has"),
            std::string::npos);
}

TEST(GemmaLoader, ReadsTheSpecialsOfThePostProcessor) {
  TinyGemmaDir none(tiny_config(), nullptr);  // tokenizers adds nothing
  EXPECT_EQ(EmbeddingModel::load(none.dir.string(), 1)->tokenizer().encode("Hello", true).size(), 1u);
  json bos_only = gemma_post_processor();
  bos_only["single"].erase(2);
  TinyGemmaDir bos(tiny_config(), bos_only);
  EXPECT_EQ(EmbeddingModel::load(bos.dir.string(), 1)->tokenizer().encode("Hello", true),
            (std::vector<int32_t>{2, 273}));  // <bos> Hello
  json other = gemma_post_processor();
  other["single"][2]["SpecialToken"]["id"] = "<pad>";
  EXPECT_NE(load_error(TinyGemmaDir(tiny_config(), other)).find("another token than EOS"), std::string::npos);
  EXPECT_NE(load_error(TinyGemmaDir(tiny_config(), json{{"type", "RobertaProcessing"}})).find("RobertaProcessing"),
            std::string::npos);
  TinyGemmaDir no_model;
  fs::remove(no_model.dir / "tokenizer.model");
  EXPECT_NE(load_error(no_model).find("no tokenizer.model"), std::string::npos);
}

}  // namespace
}  // namespace ridge
