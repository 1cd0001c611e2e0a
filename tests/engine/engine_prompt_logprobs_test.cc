// Prompt log-probabilities through the serving engine: every prompt token from the second on gets
// the log-probability the model's logits at the position before give it (checked against one
// forward pass of the whole prompt), once each, whether the prompt runs in one step or in chunks,
// alone or beside others, and whether or not an earlier request left it in the prefix cache.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine.h"
#include "engine/sampling_steps.h"
#include "engine_test_support.h"
#include "model/forward.h"

namespace ridge {
namespace {

class EnginePromptLogprobs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tiny_ = testing_support::make_tiny_model("engine_prompt_logprobs", 2, 0.1f).release(); }
  static void TearDownTestSuite() { delete tiny_; }

  static std::vector<int32_t> prompt(int32_t salt, int32_t length = 70) {
    std::vector<int32_t> p;
    for (int32_t i = 0; i < length; ++i) p.push_back((i * 37 + salt * 11) % 500 + 2);
    return p;
  }

  // log p(token p | tokens < p) for p = 1 .. n - 1, from one forward pass over the prompt.
  static std::vector<double> reference(const std::vector<int32_t>& tokens) {
    ModelForward forward(tiny_->model, 2);
    KvCache cache = forward.make_cache(int64_t(tokens.size()));
    std::vector<float> logits;
    forward.forward(tokens, cache, /*all_logits=*/true, logits, /*prompt=*/true);
    const size_t n_vocab = size_t(tiny_->model.spec.n_vocab);
    std::vector<double> out;
    for (size_t p = 1; p < tokens.size(); ++p) {
      const std::span<const float> row(logits.data() + (p - 1) * n_vocab, n_vocab);
      out.push_back(double(row[size_t(tokens[p])]) - log_sum_exp(row));
    }
    return out;
  }

  struct Got {
    std::vector<SampleResult> entries;
    int64_t events = 0;
    std::string text;
  };

  static std::vector<Got> run(const std::vector<std::vector<int32_t>>& prompts, int64_t max_batched, int32_t top) {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 256;
    c.max_batched_tokens = max_batched;
    c.prefill_chunk = max_batched;
    Engine engine(tiny_->model, tiny_->tokenizer, c);
    std::vector<Got> got(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      RequestOptions o;
      o.prompt = prompts[i];
      o.max_tokens = 2;
      o.prompt_logprobs = top;
      engine.submit(o, [&got, i](const TokenEvent& e) {
        if (e.prompt_logprobs.empty()) return;
        EXPECT_FALSE(e.has_token);
        ++got[i].events;
        got[i].entries.insert(got[i].entries.end(), e.prompt_logprobs.begin(), e.prompt_logprobs.end());
      });
    }
    engine.run_until_idle();
    return got;
  }

  static inline testing_support::TinyModel* tiny_ = nullptr;
};

TEST_F(EnginePromptLogprobs, EveryPromptTokenOnceInEveryChunking) {
  const std::vector<std::vector<int32_t>> prompts = {prompt(1), prompt(1), prompt(2)};  // the second would hit the cache
  std::vector<std::vector<double>> want;
  for (const auto& p : prompts) want.push_back(reference(p));
  for (int64_t max_batched : {512, 64, 17}) {
    const auto got = run(prompts, max_batched, 3);
    for (size_t i = 0; i < prompts.size(); ++i) {
      ASSERT_EQ(got[i].entries.size(), prompts[i].size() - 1) << "max_batched " << max_batched;
      if (max_batched == 17) EXPECT_GT(got[i].events, 1);  // several chunks, several events
      for (size_t p = 0; p < got[i].entries.size(); ++p) {
        const SampleResult& e = got[i].entries[p];
        EXPECT_EQ(e.token, prompts[i][p + 1]);
        EXPECT_NEAR(e.logprob, want[i][p], 1e-5) << "prompt " << i << " token " << p + 1 << " max_batched " << max_batched;
        ASSERT_EQ(e.top.size(), 3u);
        EXPECT_GE(e.top[0].logprob, e.top[1].logprob);
        EXPECT_GE(e.top[0].logprob, e.logprob - 1e-6f);
      }
    }
  }
}

// A continuation of a context another request computed: only the tokens from the first one that
// differs are asked for, so the context's blocks come from the prefix cache. (Both prompts are long
// enough for the prefill kernels, so the cached K/V is what this prompt would have computed.)
TEST_F(EnginePromptLogprobs, AContinuationReusesTheContextsBlocks) {
  const std::vector<int32_t> context = prompt(1, 100);
  std::vector<int32_t> continuation(context.begin(), context.begin() + 70);
  for (int32_t t : {7, 9, 11, 13, 15, 17, 19, 21, 23, 25}) continuation.push_back(t);
  const std::vector<double> want = reference(continuation);
  EngineConfig c;
  c.n_threads = 2;
  c.n_ctx = 256;
  Engine engine(tiny_->model, tiny_->tokenizer, c);
  RequestOptions first;
  first.prompt = context;
  first.max_tokens = 1;
  first.prompt_logprobs = 0;
  const RequestId first_id = engine.submit(first, [](const TokenEvent&) {});
  RequestOptions second = first;
  second.prompt = continuation;
  second.prompt_logprobs_from = 70;
  second.after_prefill_of = first_id;
  std::vector<SampleResult> entries;
  int64_t cached = 0;
  engine.submit(second, [&](const TokenEvent& e) {
    entries.insert(entries.end(), e.prompt_logprobs.begin(), e.prompt_logprobs.end());
    cached = std::max(cached, e.cached_prompt_tokens);
  });
  engine.run_until_idle();
  ASSERT_EQ(entries.size(), continuation.size() - 70);
  for (size_t k = 0; k < entries.size(); ++k) {
    EXPECT_EQ(entries[k].token, continuation[70 + k]);
    EXPECT_NEAR(entries[k].logprob, want[69 + k], 1e-5) << "token " << 70 + k;
  }
  EXPECT_GE(cached, 64);  // whole blocks of the shared 70 tokens, up to position 69
  EXPECT_LE(cached, 69);
}

}  // namespace
}  // namespace ridge
