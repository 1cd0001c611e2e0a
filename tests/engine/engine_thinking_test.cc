// A thinking model's budget and grammar inside the engine, on a small random model whose tokens
// 300 and 301 play the open and close tags: a spent budget appends the close without sampling;
// a grammar meant for the answer constrains only what follows the close; before the first token
// the open tag is allowed past that grammar.
#include <gtest/gtest.h>

#include <regex>

#include "engine/engine.h"
#include "engine/grammar_vocab.h"
#include "engine_test_support.h"
#include "grammar/grammar_spec.h"

namespace ridge {
namespace {

constexpr int32_t kOpen = 300, kClose = 301;

struct Output {
  std::vector<int32_t> tokens;
  std::vector<bool> forced;
  std::vector<std::string> texts;
  FinishReason finish = FinishReason::None;

  // Text of the tokens after the first close tag.
  std::string answer() const {
    std::string out;
    bool after = false;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (after) out += texts[i];
      after = after || tokens[i] == kClose;
    }
    return out;
  }
  long close_at() const {
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] == kClose) return long(i);
    return -1;
  }
};

class EngineThinkingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tiny_ = testing_support::make_tiny_model("engine_thinking", 2, 0.02f).release(); }
  static void TearDownTestSuite() { delete tiny_; }

  static ThinkingGate gate(bool starts_open, int32_t budget, bool defer) {
    ThinkingGate g;
    g.open_token = kOpen;
    g.close_token = kClose;
    g.starts_open = starts_open;
    g.budget = budget;
    g.forced_close = {10, kClose};
    g.defer_grammar = defer;
    return g;
  }

  static std::vector<Output> run(const std::vector<RequestOptions>& requests) {
    EngineConfig c;
    c.n_threads = 2;
    c.n_ctx = 256;
    Engine engine(tiny_->model, tiny_->tokenizer, c);
    std::vector<Output> out(requests.size());
    for (size_t i = 0; i < requests.size(); ++i)
      engine.submit(requests[i], [&out, i](const TokenEvent& e) {
        if (e.has_token) {
          out[i].tokens.push_back(e.sample.token);
          out[i].forced.push_back(e.forced);
          out[i].texts.push_back(e.text);
        }
        if (e.finish != FinishReason::None) out[i].finish = e.finish;
      });
    engine.run_until_idle();
    return out;
  }

  static RequestOptions request(uint64_t seed, std::optional<ThinkingGate> g) {
    RequestOptions o;
    o.prompt = {1, 20, 30, int32_t(40 + seed)};
    o.max_tokens = 24;
    o.ignore_eos = true;
    o.sampling.temperature = 1.0f;
    o.sampling.seed = seed;
    o.thinking = std::move(g);
    return o;
  }

  static std::shared_ptr<const grammar::CompiledGrammar> regex(const std::string& pattern) {
    grammar::GrammarSpec spec;
    spec.kind = grammar::GrammarSpec::Kind::kRegex;
    spec.source = pattern;
    return std::make_shared<const grammar::CompiledGrammar>(grammar::build_grammar(spec), grammar_vocab(tiny_->tokenizer));
  }

  static inline testing_support::TinyModel* tiny_ = nullptr;
};

TEST_F(EngineThinkingTest, ASpentBudgetAppendsTheClose) {
  std::vector<RequestOptions> requests;
  for (uint64_t seed = 0; seed < 6; ++seed) requests.push_back(request(seed, gate(true, int32_t(2 + seed), false)));
  const auto outputs = run(requests);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    const long budget = long(2 + i), close = o.close_at();
    ASSERT_GE(close, 0) << "the close was never written";
    for (long k = 0; k < std::min(close, budget); ++k) EXPECT_FALSE(o.forced[size_t(k)]);
    if (close <= budget - 1 && !o.forced[size_t(close)]) continue;  // the model closed it itself in time
    // budget sampled tokens, then the forced close sequence, then sampling again.
    ASSERT_GE(o.tokens.size(), size_t(budget + 3));
    EXPECT_EQ(std::vector<int32_t>(o.tokens.begin() + budget, o.tokens.begin() + budget + 2), (std::vector<int32_t>{10, kClose}));
    for (long k = budget; k < budget + 2; ++k) EXPECT_TRUE(o.forced[size_t(k)]);
    EXPECT_FALSE(o.forced[size_t(budget + 2)]);
  }
  // No gate, or no budget: nothing is forced.
  for (const Output& o : run({request(7, std::nullopt), request(7, gate(true, -1, false))}))
    for (bool f : o.forced) EXPECT_FALSE(f);
}

TEST_F(EngineThinkingTest, TheAnswersGrammarStartsAfterTheClose) {
  const auto grammar = regex("(yes|no)");
  std::vector<RequestOptions> requests;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    RequestOptions o = request(seed, gate(true, 4, true));
    o.grammar = grammar;
    o.ignore_eos = false;
    requests.push_back(o);
  }
  for (const Output& o : run(requests)) {
    ASSERT_GE(o.close_at(), 0);
    // The thinking is unconstrained (random tokens, not "yes"/"no"); the answer is the grammar's.
    EXPECT_TRUE(std::regex_match(o.answer(), std::regex("(yes|no)"))) << "answer '" << o.answer() << "'";
    EXPECT_EQ(o.finish, FinishReason::Stop);
  }
}

TEST_F(EngineThinkingTest, TheOpenTagIsAllowedPastTheGrammarAtTheStart) {
  const auto grammar = regex("[a-c]{1,6}");
  std::vector<RequestOptions> requests;
  for (uint64_t seed = 0; seed < 48; ++seed) {
    RequestOptions o = request(seed, gate(false, 3, true));
    o.grammar = grammar;
    o.ignore_eos = false;
    requests.push_back(o);
  }
  int opened = 0;
  for (const Output& o : run(requests)) {
    ASSERT_FALSE(o.tokens.empty());
    std::string all;
    for (const auto& t : o.texts) all += t;
    if (o.tokens[0] == kOpen) {
      ++opened;
      EXPECT_TRUE(std::regex_match(o.answer(), std::regex("[a-c]{1,6}"))) << o.answer();
    } else {
      EXPECT_TRUE(std::regex_match(all, std::regex("[a-c]{1,6}"))) << all;  // no thinking: all of it is the answer
    }
  }
  EXPECT_GE(opened, 1) << "no request took the open tag: the branch went untested";
  EXPECT_LT(opened, 48);
}

}  // namespace
}  // namespace ridge
