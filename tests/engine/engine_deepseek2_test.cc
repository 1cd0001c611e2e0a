// The serving engine on a small random deepseek2 model (latent attention, experts): its memory plan
// counts one latent row per token and layer, and every request's greedy tokens and
// log-probabilities are bit-for-bit those of the same request run alone, however the engine
// batches, chunks, preempts or serves it from the prefix cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "engine/engine.h"
#include "engine/generator.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "../model/tiny_arch_spec.h"
#include "engine_test_support.h"

namespace ridge {
namespace {

using testing_support::Output;

constexpr int64_t kRank = 32, kRope = 16, kLayers = 3;

class EngineDeepseek2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = (std::filesystem::temp_directory_path() / ("engine_deepseek2_" + std::to_string(getpid()) + ".gguf")).string();
    synth::SynthOptions o;
    o.spec = tiny_deepseek2(/*q_lora_rank=*/32);
    o.spec.n_vocab = 512;  // the prompts' ids go up to 504
    o.spec.rope_scaling = {};
    o.type = DType::Q8_0;
    o.stddev = 0.15f;  // peaked distributions, so greedy choices are not near-ties
    synth::write_synth_model(o, path_);
    model_ = new Model(load_model(path_));
    tokenizer_ = new Tokenizer(Tokenizer::from_gguf(gguf::GgufFile::open(path_)));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete model_;
    std::filesystem::remove(path_);
  }

  static std::vector<int32_t> prompt(uint32_t seed, int length) { return testing_support::random_prompt(seed, length); }
  static RequestOptions options(std::vector<int32_t> tokens, int max_tokens) {
    return testing_support::greedy_request(std::move(tokens), max_tokens);
  }
  static Output alone(const RequestOptions& o) { return testing_support::run_alone(*model_, *tokenizer_, o, 512); }
  static std::vector<Output> through(Engine& engine, const std::vector<RequestOptions>& requests) {
    return testing_support::run_through(engine, requests);
  }

  static EngineConfig config() {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 512;
    c.block_size = 16;
    c.max_batched_tokens = 64;  // long prompts are chunked, decodes share steps with prefills
    c.max_num_seqs = 16;
    c.kv_memory_bytes = 8 << 20;
    return c;
  }

  static std::string path_;
  static Model* model_;
  static Tokenizer* tokenizer_;
};
std::string EngineDeepseek2::path_;
Model* EngineDeepseek2::model_ = nullptr;
Tokenizer* EngineDeepseek2::tokenizer_ = nullptr;

TEST_F(EngineDeepseek2, MemoryPlanCountsOneLatentRowPerTokenAndLayer) {
  Engine engine(*model_, *tokenizer_, config());
  EXPECT_EQ(engine.memory_plan().bytes_per_token, kLayers * (kRank + kRope) * 2);  // f16, no value rows
}

TEST_F(EngineDeepseek2, BatchedChunkedAndPreemptedRequestsMatchEachRunAlone) {
  std::vector<RequestOptions> requests;
  std::mt19937 rng(3);
  for (uint32_t i = 0; i < 10; ++i) requests.push_back(options(prompt(i, 1 + int(rng() % 300)), 1 + int(rng() % 16)));
  std::vector<Output> want;
  for (const RequestOptions& r : requests) want.push_back(alone(r));
  for (const int64_t budget_tokens : {int64_t(0), int64_t(900)}) {  // roomy, then room for less than two sequences
    EngineConfig c = config();
    if (budget_tokens > 0) c.kv_memory_bytes = budget_tokens * kLayers * (kRank + kRope) * 2;
    Engine engine(*model_, *tokenizer_, c);
    const std::vector<Output> got = through(engine, requests);
    for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i << " budget " << budget_tokens;
    if (budget_tokens > 0) EXPECT_GT(engine.stats().preemptions, 0);
    EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  }
}

TEST_F(EngineDeepseek2, PrefixCacheHitsGiveTheSameTokens) {
  const std::vector<int32_t> shared = prompt(77, 100);
  Engine engine(*model_, *tokenizer_, config());
  for (uint32_t i = 0; i < 3; ++i) {
    std::vector<int32_t> p = shared;
    const std::vector<int32_t> tail = prompt(300 + i, 3 + int(i));
    p.insert(p.end(), tail.begin(), tail.end());
    const RequestOptions r = options(p, 8);
    const Output got = through(engine, {r})[0];
    EXPECT_EQ(got, alone(r)) << "request " << i;
    if (i > 0) EXPECT_EQ(got.cached, 96) << "the 6 full blocks of the shared 100 tokens come from the cache";
  }
}

}  // namespace
}  // namespace ridge
