// The serving engine on a tiny model of every architecture: mixed requests batched, chunked and
// preempted give each request the greedy tokens and log-probabilities of the request run alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "engine_test_support.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "../model/tiny_arch_spec.h"

namespace ridge {
namespace {

using testing_support::Output;

class EngineArch : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("engine_arch_" + GetParam() + "_" + std::to_string(getpid()) + ".gguf")).string();
    synth::SynthOptions o;
    o.spec = tiny_spec(GetParam());
    o.type = DType::Q8_0;
    o.stddev = 0.15f;  // peaked distributions, so greedy choices are not near-ties
    synth::write_synth_model(o, path_);
    model_ = std::make_unique<Model>(load_model(path_));
    tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(gguf::GgufFile::open(path_)));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string path_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_P(EngineArch, BatchedChunkedAndPreemptedRequestsMatchEachRunAlone) {
  std::vector<RequestOptions> requests;
  std::mt19937 rng(3);
  for (uint32_t i = 0; i < 10; ++i) {
    std::vector<int32_t> prompt = testing_support::random_prompt(100 + i, 1 + int(rng() % 40));
    for (auto& t : prompt) t %= 300;  // inside the tiny vocabulary
    requests.push_back(testing_support::greedy_request(prompt, 1 + int(rng() % 20)));
  }
  EngineConfig c;
  c.n_threads = 2;
  c.n_ctx = 64;
  c.block_size = 4;
  c.max_batched_tokens = 24;  // prompts are chunked, decodes share steps with prefills
  c.max_num_seqs = 10;
  const ModelSpec& s = model_->spec;
  c.kv_memory_bytes = s.n_layer * 2 * s.kv_dim() * 2 * 100;  // about 100 f16 positions: some requests are preempted
  Engine engine(*model_, *tokenizer_, c);
  const std::vector<Output> got = testing_support::run_through(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(got[i], testing_support::run_alone(*model_, *tokenizer_, requests[i], 64)) << GetParam() << " request " << i;
  EXPECT_GT(engine.stats().preemptions, 0) << GetParam();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, EngineArch, ::testing::ValuesIn(kTestArchitectures),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace ridge
