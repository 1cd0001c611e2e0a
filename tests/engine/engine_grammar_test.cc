// Structured output through the serving engine on a small random model: every request's text is a
// sentence of its own grammar, however the requests are batched, with and without jump-forward;
// forced tokens are counted and carry probability 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include "engine/engine.h"
#include "engine_test_support.h"
#include "engine/grammar_vocab.h"
#include "grammar/grammar_spec.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"

namespace ridge {
namespace {

class EngineGrammarTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tiny_ = testing_support::make_tiny_model("engine_grammar", 2, 0.02f).release();
    path_ = tiny_->path;
    model_ = &tiny_->model;
    tokenizer_ = &tiny_->tokenizer;
    vocab_ = grammar_vocab(*tokenizer_);
  }
  static void TearDownTestSuite() {
    delete tiny_;
    vocab_.reset();
  }

  static std::shared_ptr<const grammar::CompiledGrammar> compile(grammar::GrammarSpec spec) {
    return std::make_shared<const grammar::CompiledGrammar>(grammar::build_grammar(spec), vocab_);
  }
  static grammar::GrammarSpec regex(const std::string& pattern) {
    return {grammar::GrammarSpec::Kind::kRegex, pattern, {}};
  }

  struct Result {
    std::string text;
    FinishReason finish = FinishReason::None;
    int forced = 0;
    std::vector<float> forced_logprobs;
  };

  // Runs each request with its grammar in one engine, all at once.
  static std::vector<Result> run(const std::vector<std::shared_ptr<const grammar::CompiledGrammar>>& grammars,
                                 bool jump_forward, float temperature, int max_tokens = 48) {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 256;
    Engine engine(*model_, *tokenizer_, c);
    std::vector<Result> results(grammars.size());
    for (size_t i = 0; i < grammars.size(); ++i) {
      RequestOptions o;
      o.prompt = {1, int32_t(10 + i), 20, 30};
      o.max_tokens = max_tokens;
      o.grammar = grammars[i];
      o.jump_forward = jump_forward;
      o.sampling.temperature = temperature;
      o.sampling.seed = 100 + i;
      o.logprobs = true;
      engine.submit(o, [&results, i](const TokenEvent& e) {
        results[i].text += e.text;
        if (e.forced) {
          ++results[i].forced;
          results[i].forced_logprobs.push_back(e.sample.logprob);
        }
        if (e.finish != FinishReason::None) results[i].finish = e.finish;
      });
    }
    engine.run_until_idle();
    EXPECT_EQ(engine.stats().grammar_requests, int64_t(grammars.size()));
    int64_t in_buckets = 0;
    for (int64_t n : engine.stats().grammar_mask_histogram) in_buckets += n;
    EXPECT_EQ(in_buckets, engine.stats().grammar_masks);  // every mask's time is in the histogram
    return results;
  }

  static std::string path_;
  static inline testing_support::TinyModel* tiny_ = nullptr;
  static Model* model_;
  static Tokenizer* tokenizer_;
  static std::shared_ptr<const grammar::TokenVocab> vocab_;
};
std::string EngineGrammarTest::path_;
Model* EngineGrammarTest::model_ = nullptr;
Tokenizer* EngineGrammarTest::tokenizer_ = nullptr;
std::shared_ptr<const grammar::TokenVocab> EngineGrammarTest::vocab_;

TEST_F(EngineGrammarTest, EachRequestFollowsItsOwnGrammarInOneBatch) {
  const std::vector<std::string> patterns = {"[a-e]{3,8}", "(yes|no|maybe)", "[0-9]{2}-[0-9]{2}", "x+y?z"};
  std::vector<std::shared_ptr<const grammar::CompiledGrammar>> grammars;
  for (const auto& p : patterns) grammars.push_back(compile(regex(p)));
  for (bool jump : {false, true})
    for (float temp : {0.0f, 1.0f}) {
      const auto results = run(grammars, jump, temp);
      for (size_t i = 0; i < patterns.size(); ++i) {
        if (results[i].finish == FinishReason::Length) continue;  // "x+" may run to the limit
        EXPECT_EQ(results[i].finish, FinishReason::Stop) << patterns[i];
        EXPECT_TRUE(std::regex_match(results[i].text, std::regex(patterns[i])))
            << patterns[i] << " gave '" << results[i].text << "' (jump " << jump << ", temp " << temp << ")";
      }
    }
}

TEST_F(EngineGrammarTest, JumpForwardAppendsForcedTokensWithProbabilityOne) {
  grammar::GrammarSpec choice{grammar::GrammarSpec::Kind::kChoice, {}, {"the quick brown fox jumps over the lazy dog", "the quick brown fox sleeps"}};
  const auto g = compile(choice);
  const auto with = run({g, g}, true, 1.0f);
  const auto without = run({g}, false, 1.0f);
  for (const auto& r : with) {
    EXPECT_TRUE(r.text == choice.choices[0] || r.text == choice.choices[1]) << r.text;
    EXPECT_GT(r.forced, 0);
    for (float lp : r.forced_logprobs) EXPECT_EQ(lp, 0.0f);
  }
  EXPECT_TRUE(without[0].text == choice.choices[0] || without[0].text == choice.choices[1]) << without[0].text;
  EXPECT_EQ(without[0].forced, 0);
}

TEST_F(EngineGrammarTest, SchemaOutputParsesAndMaxTokensStillBinds) {
  grammar::GrammarSpec spec{grammar::GrammarSpec::Kind::kJsonSchema,
                            R"({"type":"object","properties":{"id":{"type":"integer","minimum":0,"maximum":99},)"
                            R"("ok":{"type":"boolean"}},"required":["id","ok"],"additionalProperties":false})",
                            {}};
  const auto results = run({compile(spec)}, true, 1.0f, 64);
  ASSERT_EQ(results[0].finish, FinishReason::Stop) << results[0].text;
  const auto j = nlohmann::json::parse(results[0].text);
  // JSON Schema's integer: a number with no fractional part (1.0 is one too).
  ASSERT_TRUE(j["id"].is_number()) << results[0].text;
  const double id = j["id"].get<double>();
  EXPECT_TRUE(id == std::floor(id) && id >= 0 && id <= 99) << results[0].text;
  EXPECT_TRUE(j["ok"].is_boolean());
  const auto cut = run({compile(spec)}, true, 1.0f, 3);
  EXPECT_EQ(cut[0].finish, FinishReason::Length);
}

}  // namespace
}  // namespace ridge
