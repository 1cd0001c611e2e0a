// LoRA adapters through the engine: requests of several adapters and the base in one batch give
// what each gives alone, and the prefix cache never serves one adapter's blocks to another.
#include <gtest/gtest.h>

#include <random>

#include "engine_test_support.h"
#include "model/lora/lora_adapter.h"

namespace ridge {
namespace {

using testing_support::Output;

std::shared_ptr<const lora::LoraAdapter> random_adapter(const ModelSpec& spec, uint32_t seed, int64_t rank) {
  static std::atomic<uint64_t> next_id{1000};
  auto a = std::make_shared<lora::LoraAdapter>();
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.25f);
  for (int64_t l = 0; l < spec.n_layer; ++l)
    for (int t = 0; t < lora::kTargets; ++t) {
      if ((seed + uint32_t(t)) % 3 == 0) continue;  // each adapter its own set of targets
      const auto [d_out, d_in] = lora::target_shape(spec, lora::Target(t));
      lora::LoraMatrix m;
      m.rank = rank, m.d_in = d_in, m.d_out = d_out, m.scale = 2.0f;
      m.a.resize(size_t(rank * d_in));
      m.b.resize(size_t(d_out * rank));
      for (float& x : m.a) x = d(rng);
      for (float& x : m.b) x = d(rng);
      lora::place_matrix(*a, spec, l, lora::Target(t), std::move(m), "test");
    }
  a->id = next_id++;
  return a;
}

class LoraEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tiny_ = testing_support::make_tiny_model("lora_engine", 2).release(); }
  static void TearDownTestSuite() { delete tiny_; }
  static EngineConfig config() {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 256;
    c.block_size = 4;
    c.kv_memory_bytes = 4 << 20;
    c.max_batched_tokens = 48;  // prompts chunked, decodes beside prefills
    return c;
  }
  static std::vector<Output> run(const std::vector<RequestOptions>& requests) {
    Engine engine(tiny_->model, tiny_->tokenizer, config());
    return testing_support::run_through(engine, requests);
  }
  static inline testing_support::TinyModel* tiny_ = nullptr;
};

TEST_F(LoraEngineTest, MixedAdaptersInOneBatchMatchEachRunAlone) {
  const ModelSpec& spec = tiny_->model.spec;
  std::vector<std::shared_ptr<const lora::LoraAdapter>> adapters{nullptr};
  for (uint32_t i = 0; i < 4; ++i) adapters.push_back(random_adapter(spec, 7 + i, i % 2 ? 8 : 4));
  std::vector<RequestOptions> requests;
  std::mt19937 rng(3);
  for (uint32_t i = 0; i < 12; ++i) {
    RequestOptions o = testing_support::greedy_request(testing_support::random_prompt(100 + i % 6, 5 + int(rng() % 50)), 12);
    o.adapter = adapters[i % adapters.size()];
    requests.push_back(std::move(o));
  }
  const std::vector<Output> together = run(requests);
  std::vector<Output> base_alone;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Output alone = run({requests[i]})[0];
    EXPECT_EQ(together[i], alone) << "request " << i;
    if (i % adapters.size() == 0) base_alone.push_back(alone);
  }
  // The adapters change what the model says (requests 0 and 5 share a prompt: base vs adapter 1).
  RequestOptions same = requests[0];
  same.adapter = adapters[1];
  EXPECT_NE(run({same})[0].tokens, together[0].tokens);
}

TEST_F(LoraEngineTest, ThePrefixCacheKeepsAdaptersApart) {
  const ModelSpec& spec = tiny_->model.spec;
  const auto a = random_adapter(spec, 21, 4), b = random_adapter(spec, 22, 4);
  const std::vector<int32_t> prompt = testing_support::random_prompt(5, 40);
  Engine engine(tiny_->model, tiny_->tokenizer, config());
  const auto ask = [&](std::shared_ptr<const lora::LoraAdapter> adapter) {
    RequestOptions o = testing_support::greedy_request(prompt, 6);
    o.adapter = std::move(adapter);
    return testing_support::run_through(engine, {o})[0];
  };
  const Output base1 = ask(nullptr);
  const Output a1 = ask(a);
  const Output b1 = ask(b);
  const Output a2 = ask(a);
  const Output base2 = ask(nullptr);
  EXPECT_EQ(a1.cached, 0) << "the base's blocks were served to an adapter's request";
  EXPECT_EQ(b1.cached, 0) << "adapter a's blocks were served to adapter b's request";
  EXPECT_GT(a2.cached, 0);
  EXPECT_GT(base2.cached, 0);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(base1, base2);
  EXPECT_NE(a1.tokens, b1.tokens);
}

}  // namespace
}  // namespace ridge
