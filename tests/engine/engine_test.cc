// The serving engine on a small random model: every request's greedy tokens and their
// log-probabilities must be bit-for-bit those of the same request run alone through the
// single-sequence generator, however the engine batches, chunks, preempts or caches it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "engine_test_support.h"

namespace ridge {
namespace {

using testing_support::Output;

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tiny_ = testing_support::make_tiny_model("engine_test", 2).release();
    path_ = tiny_->path;
    model_ = &tiny_->model;
    tokenizer_ = &tiny_->tokenizer;
  }
  static void TearDownTestSuite() {
    delete tiny_;
  }

  static std::vector<int32_t> prompt(uint32_t seed, int length) { return testing_support::random_prompt(seed, length); }
  static RequestOptions options(std::vector<int32_t> tokens, int max_tokens) {
    return testing_support::greedy_request(std::move(tokens), max_tokens);
  }
  static Output alone(const RequestOptions& o) { return testing_support::run_alone(*model_, *tokenizer_, o, 256); }
  static std::vector<Output> through(Engine& engine, const std::vector<RequestOptions>& requests) {
    return testing_support::run_through(engine, requests);
  }

  static EngineConfig config() {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 256;
    c.block_size = 4;
    c.kv_memory_bytes = 4 << 20;
    return c;
  }

  static std::string path_;
  static inline testing_support::TinyModel* tiny_ = nullptr;
  static Model* model_;
  static Tokenizer* tokenizer_;
};
std::string EngineTest::path_;
Model* EngineTest::model_ = nullptr;
Tokenizer* EngineTest::tokenizer_ = nullptr;

TEST_F(EngineTest, ThirtyTwoMixedRequestsInOneBatchMatchEachRunAlone) {
  std::vector<RequestOptions> requests;
  std::mt19937 rng(1);
  for (uint32_t i = 0; i < 32; ++i) requests.push_back(options(prompt(i, 1 + int(rng() % 60)), 1 + int(rng() % 24)));
  EngineConfig c = config();
  c.max_batched_tokens = 64;  // long prompts are chunked, decodes share steps with prefills
  c.max_num_seqs = 32;
  Engine engine(*model_, *tokenizer_, c);
  const std::vector<Output> got = through(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    const Output want = alone(requests[i]);
    EXPECT_EQ(got[i], want) << "request " << i;
    EXPECT_EQ(got[i].finish, FinishReason::Length);
    EXPECT_EQ(got[i].tokens.size(), size_t(requests[i].max_tokens));
  }
  const EngineStats s = engine.stats();
  EXPECT_GT(s.last_batch_seqs, 0);
  EXPECT_EQ(s.kv_blocks_used, 0) << "every block is released when its requests end";
  EXPECT_EQ(s.requests_finished_length, 32);
  EXPECT_EQ(s.running + s.waiting, 0);
}

// Prompts that repeat themselves, so prompt lookup finds matches and its drafts are often right.
std::vector<int32_t> repeating_prompt(uint32_t seed, int period, int length) {
  std::mt19937 rng(seed);
  std::vector<int32_t> unit(static_cast<size_t>(period));
  for (auto& t : unit) t = int32_t(rng() % 500) + 5;
  std::vector<int32_t> p;
  while (int(p.size()) < length) p.push_back(unit[p.size() % unit.size()]);
  return p;
}

TEST_F(EngineTest, SpeculativeGreedyTokensAreThoseOfEachRunAlone) {
  std::vector<RequestOptions> requests;
  std::mt19937 rng(5);
  for (uint32_t i = 0; i < 24; ++i)
    requests.push_back(options(i % 3 == 0 ? prompt(400 + i, 1 + int(rng() % 40)) : repeating_prompt(i, 3 + int(i % 7), 20 + int(rng() % 40)),
                               1 + int(rng() % 30)));
  for (const SpeculativeMode mode : {SpeculativeMode::kNgram, SpeculativeMode::kAuto}) {
    for (int32_t k : {1, 3, 7}) {
      EngineConfig c = config();
      c.max_batched_tokens = 48;  // drafts compete with prefill chunks for the budget
      c.max_num_seqs = 24;
      c.speculative = mode;
      c.num_speculative_tokens = k;
      c.ngram.min_n = 1;
      Engine engine(*model_, *tokenizer_, c);
      const std::vector<Output> got = through(engine, requests);
      for (size_t i = 0; i < requests.size(); ++i) {
        EXPECT_EQ(got[i], alone(requests[i])) << "request " << i << " k " << k;
        EXPECT_EQ(got[i].tokens.size(), size_t(requests[i].max_tokens));
      }
      const EngineStats s = engine.stats();
      if (mode == SpeculativeMode::kNgram) {
        EXPECT_GT(s.spec_draft_tokens, 0);
        EXPECT_GT(s.spec_accepted_tokens, 0) << "k " << k;
      }
      EXPECT_LE(s.spec_accepted_tokens, s.spec_draft_tokens);
      EXPECT_EQ(s.kv_blocks_used, 0) << "rejected drafts' blocks are released too";
    }
  }
}

TEST_F(EngineTest, SpeculationSurvivesPreemptionAndCancellation) {
  std::vector<RequestOptions> requests;
  for (uint32_t i = 0; i < 12; ++i) requests.push_back(options(repeating_prompt(500 + i, 4, 30 + int(i)), 40));
  EngineConfig c = config();
  c.n_ctx = 96;
  c.max_num_seqs = 12;
  c.kv_memory_bytes = 2 * 2 * 32 * 2 * 200;  // about two and a half full sequences
  c.speculative = SpeculativeMode::kNgram;
  c.ngram.min_n = 1;
  {
    Engine engine(*model_, *tokenizer_, c);
    const std::vector<Output> got = through(engine, requests);
    for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(got[i], alone(requests[i])) << "request " << i;
    EXPECT_GT(engine.stats().preemptions, 0);
    EXPECT_GT(engine.stats().spec_accepted_tokens, 0);
    EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  }
  c.kv_memory_bytes = 4 << 20;
  Engine engine(*model_, *tokenizer_, c);
  std::vector<RequestId> ids;
  int finished = 0;
  for (const auto& r : requests)
    ids.push_back(engine.submit(r, [&finished](const TokenEvent& e) { finished += e.finish != FinishReason::None; }));
  std::mt19937 rng(9);
  for (int s = 0; s < 300 && engine.step(); ++s)
    if (s % 5 == 2) engine.cancel(ids[rng() % ids.size()]);
  engine.run_until_idle();
  EXPECT_EQ(finished, int(requests.size()));
  EXPECT_EQ(engine.stats().kv_blocks_used, 0) << "no block leaks however drafts and cancellations meet";
}

TEST_F(EngineTest, SpeculativeSamplingIsSeededAndReproducible) {
  std::vector<RequestOptions> requests;
  for (uint32_t i = 0; i < 6; ++i) {
    RequestOptions r = options(repeating_prompt(600 + i, 5, 40), 30);
    r.sampling.temperature = 0.7f;
    r.sampling.top_p = 0.9f;
    r.sampling.seed = 11 + i;
    requests.push_back(r);
  }
  EngineConfig c = config();
  c.speculative = SpeculativeMode::kNgram;
  c.ngram.min_n = 1;
  Engine first(*model_, *tokenizer_, c), second(*model_, *tokenizer_, c);
  EXPECT_EQ(through(first, requests), through(second, requests));
}

// A draft model: the same vocabulary, another (smaller) random model -- so it is often wrong,
// and sometimes right where the target's greedy choice is peaked.
TEST_F(EngineTest, DraftModelGreedyTokensAreThoseOfEachRunAlone) {
  const std::string draft_path = path_ + ".draft.gguf";
  synth::SynthOptions o;
  o.spec = model_->spec;
  o.spec.n_layer = 1;
  o.type = DType::Q8_0;
  o.stddev = 0.15f;
  o.seed = 1;  // the target's seed: its first layer and embeddings agree with the target's
  synth::write_synth_model(o, draft_path);
  const Model draft = load_model(draft_path);
  std::vector<RequestOptions> requests;
  std::mt19937 rng(8);
  for (uint32_t i = 0; i < 16; ++i) requests.push_back(options(prompt(700 + i, 1 + int(rng() % 50)), 1 + int(rng() % 30)));
  // Also with the draft's head cut to the first 200 of 512 tokens (the target's tokens past the cut
  // are never proposed), and with drafting stopped after an unsure draft token: the output is still
  // the target's own.
  struct Variant {
    SpeculativeMode mode;
    int64_t vocab;
    float p_min;
  };
  for (const auto& [mode, vocab, p_min] : {Variant{SpeculativeMode::kDraft, 0, 0.0f}, Variant{SpeculativeMode::kAuto, 0, 0.0f},
                                           Variant{SpeculativeMode::kDraft, 200, 0.0f}, Variant{SpeculativeMode::kDraft, 0, 0.3f}}) {
    EngineConfig c = config();
    c.max_batched_tokens = 40;
    c.max_num_seqs = 16;
    c.speculative = mode;
    c.num_speculative_tokens = 4;
    c.draft_model = &draft;
    c.draft_vocab_size = vocab;
    c.draft_p_min = p_min;
    Engine engine(*model_, *tokenizer_, c);
    const std::vector<Output> got = through(engine, requests);
    for (size_t i = 0; i < requests.size(); ++i)
      EXPECT_EQ(got[i], alone(requests[i])) << "request " << i << " draft vocabulary " << vocab << " p_min " << p_min;
    const EngineStats s = engine.stats();
    if (mode == SpeculativeMode::kDraft) {
      EXPECT_GT(s.spec_draft_tokens, 0);
      EXPECT_GT(s.spec_accepted_tokens, 0);
    }
    EXPECT_EQ(s.kv_blocks_used, 0);
  }
  // Sampling with a model draft stays seeded and reproducible.
  for (auto& r : requests) r.sampling.temperature = 0.8f, r.sampling.seed = 5;
  EngineConfig c = config();
  c.speculative = SpeculativeMode::kDraft;
  c.draft_model = &draft;
  Engine first(*model_, *tokenizer_, c), second(*model_, *tokenizer_, c);
  EXPECT_EQ(through(first, requests), through(second, requests));
  c.draft_vocab_size = 200;
  c.draft_p_min = 0.3f;
  Engine cut_first(*model_, *tokenizer_, c), cut_second(*model_, *tokenizer_, c);
  EXPECT_EQ(through(cut_first, requests), through(cut_second, requests));
  std::filesystem::remove(draft_path);
}

TEST_F(EngineTest, AnyPrefillChunkSizeGivesTheSameTokens) {
  const RequestOptions r = options(prompt(99, 70), 12);
  const Output want = alone(r);
  for (int64_t chunk : {1, 3, 7, 16, 1000}) {
    EngineConfig c = config();
    c.max_batched_tokens = chunk;
    Engine engine(*model_, *tokenizer_, c);
    EXPECT_EQ(through(engine, {r})[0], want) << "chunk " << chunk;
  }
}

TEST_F(EngineTest, PreemptedRequestsResumeWithTheSameTokens) {
  std::vector<RequestOptions> requests;
  for (uint32_t i = 0; i < 12; ++i) requests.push_back(options(prompt(100 + i, 30 + int(i)), 40));
  EngineConfig c = config();
  c.n_ctx = 96;
  c.max_num_seqs = 12;
  // Room for about two and a half full sequences: running twelve at once forces preemptions.
  const int64_t bytes_per_token = 2 * 2 * 32 * 2;  // K and V, 2 layers, 32 values, f16
  c.kv_memory_bytes = bytes_per_token * 200;
  Engine engine(*model_, *tokenizer_, c);
  const std::vector<Output> got = through(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(got[i], alone(requests[i])) << "request " << i;
  EXPECT_GT(engine.stats().preemptions, 0);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

TEST_F(EngineTest, PrefixCacheHitsGiveTheSameTokens) {
  const std::vector<int32_t> shared = prompt(7, 41);
  EngineConfig c = config();
  Engine engine(*model_, *tokenizer_, c);
  for (uint32_t i = 0; i < 4; ++i) {
    std::vector<int32_t> p = shared;
    const std::vector<int32_t> tail = prompt(200 + i, 5 + int(i));
    p.insert(p.end(), tail.begin(), tail.end());
    const RequestOptions r = options(p, 10);
    const Output got = through(engine, {r})[0];
    EXPECT_EQ(got, alone(r)) << "request " << i;
    if (i > 0) {
      EXPECT_EQ(got.cached, 40) << "the 10 full blocks of the shared 41 tokens come from the cache";
    }
  }
  EXPECT_GE(engine.stats().prefix_hit_tokens, 3 * 40);
}

TEST_F(EngineTest, SiblingSamplesShareTheirPromptBlocks) {
  EngineConfig c = config();
  Engine engine(*model_, *tokenizer_, c);
  RequestOptions first = options(prompt(5, 50), 8);
  first.sampling.temperature = 0.8f;
  first.sampling.seed = 1;
  std::vector<Output> outs(3);
  const RequestId parent = engine.submit(first, [&](const TokenEvent& e) {
    if (e.has_token) outs[0].tokens.push_back(e.sample.token);
  });
  for (int i = 1; i < 3; ++i) {
    RequestOptions sibling = first;
    sibling.sampling.seed = uint64_t(i + 1);
    sibling.after_prefill_of = parent;
    engine.submit(sibling, [&outs, i](const TokenEvent& e) {
      if (e.has_token) outs[size_t(i)].tokens.push_back(e.sample.token);
      if (e.finish != FinishReason::None) outs[size_t(i)].cached = e.cached_prompt_tokens;
    });
  }
  engine.run_until_idle();
  EXPECT_EQ(outs[1].cached, 48);
  EXPECT_EQ(outs[2].cached, 48);
  for (const Output& o : outs) EXPECT_EQ(o.tokens.size(), 8u);
  RequestOptions again = first;
  EXPECT_EQ(alone(again).tokens, outs[0].tokens) << "a seeded sample is reproducible";
}

TEST_F(EngineTest, StopStringsEndTheRequestLikeTheGenerator) {
  RequestOptions r = options(prompt(11, 20), 30);
  const Output free_run = alone(r);
  ASSERT_GT(free_run.text.size(), 6u);
  r.stop = {free_run.text.substr(free_run.text.size() / 2, 3)};
  Engine engine(*model_, *tokenizer_, config());
  const Output got = through(engine, {r})[0];
  EXPECT_EQ(got.finish, FinishReason::Stop);
  EXPECT_EQ(got.text, alone(r).text);
  EXPECT_LT(got.text.size(), free_run.text.size());
}

TEST_F(EngineTest, CancelledRequestsEndWithAbortAndFreeTheirBlocks) {
  EngineConfig c = config();
  Engine engine(*model_, *tokenizer_, c);
  std::map<RequestId, FinishReason> finish;
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 10; ++i)
    ids.push_back(engine.submit(options(prompt(300 + i, 20), 50), [&finish](const TokenEvent& e) {
      if (e.finish != FinishReason::None) finish[e.id] = e.finish;
    }));
  std::mt19937 rng(3);
  for (int s = 0; s < 200 && engine.step(); ++s)
    if (s % 7 == 3) engine.cancel(ids[rng() % ids.size()]);
  engine.run_until_idle();
  int aborted = 0;
  for (RequestId id : ids) {
    ASSERT_TRUE(finish.contains(id));
    aborted += finish[id] == FinishReason::Abort;
  }
  EXPECT_GT(aborted, 0);
  EXPECT_EQ(engine.stats().requests_aborted, aborted);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

TEST_F(EngineTest, BadRequestsAreRefusedAtSubmit) {
  EngineConfig c = config();
  c.n_ctx = 32;
  c.max_waiting = 1;
  c.max_num_seqs = 1;
  Engine engine(*model_, *tokenizer_, c);
  auto kind_of = [&](RequestOptions r) {
    try {
      engine.submit(std::move(r), {});
    } catch (const SubmitError& e) {
      return int(e.kind);
    }
    return -1;
  };
  EXPECT_EQ(kind_of(options({}, 4)), int(SubmitError::Kind::BadRequest));
  EXPECT_EQ(kind_of(options({1, 99999}, 4)), int(SubmitError::Kind::BadRequest));
  EXPECT_EQ(kind_of(options(prompt(1, 32), 4)), int(SubmitError::Kind::ContextExceeded));
  RequestOptions hot = options(prompt(1, 4), 4);
  hot.sampling.temperature = -1;
  EXPECT_EQ(kind_of(hot), int(SubmitError::Kind::BadRequest));
  EXPECT_EQ(kind_of(options(prompt(1, 31), 400)), -1) << "max_tokens is clamped to the context, not refused";
  EXPECT_EQ(kind_of(options(prompt(1, 4), 4)), -1);
  EXPECT_EQ(kind_of(options(prompt(1, 4), 4)), int(SubmitError::Kind::QueueFull));
}

TEST_F(EngineTest, TooSmallKvBudgetIsAClearErrorAtStart) {
  EngineConfig c = config();
  c.kv_memory_bytes = 1000;
  EXPECT_THROW({ Engine engine(*model_, *tokenizer_, c); }, Error);
}

TEST_F(EngineTest, LoopThreadServesConcurrentSubmitters) {
  EngineConfig c = config();
  Engine engine(*model_, *tokenizer_, c);
  engine.start();
  std::mutex m;
  std::condition_variable cv;
  std::map<int, Output> outs;
  int done = 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] {
      engine.submit(options(prompt(uint32_t(400 + i), 10 + i), 6), [&, i](const TokenEvent& e) {
        std::lock_guard lock(m);
        if (e.has_token) {
          outs[i].tokens.push_back(e.sample.token);
          outs[i].logprobs.push_back(e.sample.logprob);
        }
        outs[i].text += e.text;
        if (e.finish != FinishReason::None) {
          ++done;
          cv.notify_all();
        }
      });
    });
  for (auto& t : clients) t.join();
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return done == 8; }));
  }
  engine.stop();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(outs[i], alone(options(prompt(uint32_t(400 + i), 10 + i), 6))) << i;
}

}  // namespace
}  // namespace ridge
