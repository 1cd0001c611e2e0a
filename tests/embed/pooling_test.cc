// Pooling modes, Dense layers, normalisation and Matryoshka truncation, and the sentence-transformers
// pipeline read from its files (a directory written here).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "embed/embedding_model.h"
#include "embed/pooling.h"
#include "embed/st_pipeline.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

// Three tokens of two dimensions.
constexpr float kStates[] = {1.0f, -2.0f, 3.0f, 4.0f, -5.0f, 6.0f};

std::vector<float> pooled(PoolingMode mode, int64_t skip = 0) {
  std::vector<float> out(2);
  pool_tokens(kStates, 3, 2, mode, skip, out.data());
  return out;
}

TEST(Pooling, EveryMode) {
  EXPECT_EQ(pooled(PoolingMode::Cls), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(pooled(PoolingMode::LastToken), (std::vector<float>{-5.0f, 6.0f}));
  EXPECT_EQ(pooled(PoolingMode::Max), (std::vector<float>{3.0f, 6.0f}));
  EXPECT_EQ(pooled(PoolingMode::Mean), (std::vector<float>{-1.0f / 3.0f, 8.0f / 3.0f}));
  const std::vector<float> sqrt_len = pooled(PoolingMode::MeanSqrtLen);
  EXPECT_FLOAT_EQ(sqrt_len[0], -1.0f / std::sqrt(3.0f));
  // A prompt left out of the pooling: the mean of the last two, but CLS stays the first token.
  EXPECT_EQ(pooled(PoolingMode::Mean, 1), (std::vector<float>{-1.0f, 5.0f}));
  EXPECT_EQ(pooled(PoolingMode::Cls, 1), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_THROW(pool_tokens(kStates, 0, 2, PoolingMode::Mean, 0, nullptr), Error);
  EXPECT_EQ(pooling_from_llama_type(3), PoolingMode::LastToken);
  EXPECT_THROW(pooling_from_llama_type(4), Error);  // rank: a reranker's head, not a pooling
}

TEST(Pooling, DenseNormaliseAndTruncate) {
  DenseLayer d;
  d.in = 2, d.out = 1, d.weight = {2.0f, 1.0f}, d.bias = {0.5f}, d.activation = DenseLayer::Activation::Tanh;
  EXPECT_FLOAT_EQ(d.apply(std::vector<float>{1.0f, -1.0f})[0], std::tanh(1.5f));
  d.activation = DenseLayer::Activation::Sigmoid;
  EXPECT_FLOAT_EQ(d.apply(std::vector<float>{0.0f, -0.5f})[0], 0.5f);
  EXPECT_THROW(d.apply(std::vector<float>{1.0f}), Error);
  std::vector<float> v{3.0f, 4.0f, 12.0f};
  l2_normalize(v);
  EXPECT_FLOAT_EQ(v[2], 12.0f / 13.0f);
  const std::vector<float> short_v = truncate_dimensions(v, 2, true);
  EXPECT_FLOAT_EQ(short_v[0], 0.6f);
  EXPECT_FLOAT_EQ(short_v[1], 0.8f);
  EXPECT_THROW(truncate_dimensions(v, 4, true), Error);
  EXPECT_THROW(truncate_dimensions(v, 0, true), Error);
  std::vector<float> zero{0.0f, 0.0f};
  l2_normalize(zero);  // left as it is, no NaN
  EXPECT_EQ(zero[0], 0.0f);
}

class PipelineDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ridge_st_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "1_Pooling");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  fs::path dir_;
};

TEST_F(PipelineDir, ReadsModulesPoolingPromptsAndLength) {
  write("modules.json", R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])");
  write("1_Pooling/config.json", R"({"pooling_mode_cls_token": true, "include_prompt": false})");
  write("sentence_bert_config.json", R"({"max_seq_length": 128})");
  write("config_sentence_transformers.json", R"({"prompts": {"query": "q: ", "doc": ""}, "default_prompt_name": "query"})");
  const EmbeddingPipeline p = read_embedding_pipeline(dir_.string(), 8);
  EXPECT_EQ(p.pooling, PoolingMode::Cls);
  EXPECT_FALSE(p.include_prompt);
  EXPECT_TRUE(p.normalize);
  EXPECT_EQ(p.max_seq_length, 128);
  EXPECT_EQ(p.prompt("query"), "q: ");
  EXPECT_EQ(p.default_prompt_name, "query");
  EXPECT_THROW(p.prompt("passage"), Error);
  EXPECT_EQ(p.output_dim(8), 8);
}

TEST_F(PipelineDir, RefusesWhatItCannotRun) {
  write("modules.json", R"([{"path": "", "type": "sentence_transformers.models.Transformer"},
    {"path": "x", "type": "sentence_transformers.models.LayerNorm"}])");
  EXPECT_THROW(read_embedding_pipeline(dir_.string(), 8), Error);
  write("modules.json", R"([{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  write("1_Pooling/config.json", R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})");
  EXPECT_THROW(read_embedding_pipeline(dir_.string(), 8), Error);  // two modes at once
  write("1_Pooling/config.json", R"({"pooling_mode_cls_token": "yes"})");
  EXPECT_THROW(read_embedding_pipeline(dir_.string(), 8), Error);  // a field of the wrong type
  write("modules.json", R"({"not": "a list"})");
  EXPECT_THROW(read_embedding_pipeline(dir_.string(), 8), Error);
  write("modules.json", "[]");
  write("sentence_bert_config.json", R"({"max_seq_length": -3})");
  EXPECT_THROW(read_embedding_pipeline(dir_.string(), 8), Error);
}

TEST_F(PipelineDir, WithoutModulesJsonTheDefaultsOfSentenceTransformers) {
  const EmbeddingPipeline p = read_embedding_pipeline(dir_.string(), 8);
  EXPECT_EQ(p.pooling, PoolingMode::Mean);
  EXPECT_FALSE(p.normalize);
  EXPECT_TRUE(p.dense.empty());
}

}  // namespace
}  // namespace ridge
