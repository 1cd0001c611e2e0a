// The precomputed token masks against the naive truth: for every token, run the matcher over its
// bytes from the current state. Random walks through grammars over random vocabularies.
#include <gtest/gtest.h>

#include <random>

#include "grammar/builder.h"
#include "naive_mask.h"
#include "grammar/matcher.h"

namespace ridge::grammar {
namespace {

// A JSON grammar written by hand with the builder (values nest through rule references).
Grammar json_grammar() {
  GrammarBuilder b;
  const RuleId value = b.add_rule("value");
  const RuleId string = b.add_rule("string");
  Sequence str = GrammarBuilder::literal("\"");
  str.push_back(b.repeat({b.json_char_class(CodepointSet::any())}, 0, -1, "chars"));
  GrammarBuilder::append(str, GrammarBuilder::literal("\""));
  b.add_alternative(string, str);
  const Symbol digit = Symbol::of_bytes(ByteSet::range('0', '9'));
  Sequence integer = {b.optional(GrammarBuilder::literal("-"), "sign"),
                      b.choice({GrammarBuilder::literal("0"),
                                {Symbol::of_bytes(ByteSet::range('1', '9')), b.repeat({digit}, 0, -1, "digits")}},
                               "int")};
  Sequence frac = GrammarBuilder::literal(".");
  frac.push_back(b.repeat({digit}, 1, -1, "fdigits"));
  integer.push_back(b.optional(frac, "frac"));
  const Symbol number = b.choice({integer}, "number");
  auto list_of = [&](const Sequence& item, const char* open, const char* close, const char* name) {
    Sequence more = GrammarBuilder::literal(",");
    GrammarBuilder::append(more, item);
    Sequence items = item;
    items.push_back(b.repeat(more, 0, -1, name));
    Sequence whole = GrammarBuilder::literal(open);
    whole.push_back(b.optional(items, name));
    GrammarBuilder::append(whole, GrammarBuilder::literal(close));
    return whole;
  };
  Sequence pair = {Symbol::of_rule(string)};
  GrammarBuilder::append(pair, GrammarBuilder::literal(":"));
  pair.push_back(Symbol::of_rule(value));
  b.set_alternatives(value, {list_of(pair, "{", "}", "members"),
                             list_of({Symbol::of_rule(value)}, "[", "]", "elements"),
                             {Symbol::of_rule(string)},
                             {number},
                             GrammarBuilder::literal("true"),
                             GrammarBuilder::literal("false"),
                             GrammarBuilder::literal("null")});
  return b.finish(value);
}

Grammar key_grammar() {
  // {"orderId":<int>,"name":"<chars>"} with fixed keys: long forced runs.
  GrammarBuilder b;
  const RuleId root = b.add_rule("root");
  Sequence s = GrammarBuilder::literal("{\"orderId\":");
  s.push_back(b.repeat({Symbol::of_bytes(ByteSet::range('0', '9'))}, 1, 6, "digits"));
  GrammarBuilder::append(s, GrammarBuilder::literal(",\"name\":\""));
  s.push_back(b.repeat({b.json_char_class(CodepointSet::range('a', 'z'))}, 0, -1, "chars"));
  GrammarBuilder::append(s, GrammarBuilder::literal("\"}"));
  b.add_alternative(root, s);
  return b.finish(root);
}

// A string of min..max characters closed by a quote, then a digit: long counted runs, where
// chains at different counts share their sorted tokens (same spelling within a token's length).
Grammar counted_grammar(int64_t min, int64_t max) {
  GrammarBuilder b;
  const RuleId root = b.add_rule("root");
  Sequence s = GrammarBuilder::literal("\"");
  s.push_back(b.repeat({b.json_char_class(CodepointSet::range('a', 'z'))}, min, max, "chars"));
  GrammarBuilder::append(s, GrammarBuilder::literal("\""));
  s.push_back(Symbol::of_bytes(ByteSet::range('0', '9')));
  b.add_alternative(root, s);
  return b.finish(root);
}

std::shared_ptr<const TokenVocab> random_vocab(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  const std::string alphabet = "{}[]\":,0123456789.-abcdefghijklmnorstuyz \\nI";
  std::vector<std::string> tokens;
  for (unsigned char c : alphabet) tokens.push_back(std::string(1, static_cast<char>(c)));
  tokens.push_back("\xC3\xA9");  // é
  tokens.push_back("\xC3");      // half a character
  tokens.push_back("\xA9");
  tokens.push_back("orderId");
  tokens.push_back("\":");
  tokens.push_back("\",\"");
  tokens.push_back("}]");
  tokens.push_back("");  // never allowed
  while (static_cast<int>(tokens.size()) < n) {
    std::string t;
    const int len = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < len; ++k) t += alphabet[rng() % alphabet.size()];
    tokens.push_back(t);
  }
  tokens.push_back(tokens[10]);  // a duplicate spelling
  const int32_t eos = static_cast<int32_t>(tokens.size());
  tokens.push_back("");
  return std::make_shared<const TokenVocab>(tokens, std::vector<int32_t>{eos});
}


void random_walks(const Grammar& grammar, uint64_t seed, int walks, int steps) {
  auto vocab = random_vocab(seed, 400);
  auto compiled = std::make_shared<const CompiledGrammar>(grammar, vocab);
  std::mt19937_64 rng(seed);
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher m(compiled);
    std::string text;
    std::vector<std::string> texts{text};
    for (int step = 0; step < steps && !m.terminated(); ++step) {
      const auto fast = m.mask();
      ASSERT_EQ(fast, naive_mask(*compiled, text, m.terminated())) << "walk " << w << " after \"" << text << "\"";
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < vocab->n_vocab(); ++t)
        if ((fast[t >> 6] >> (t & 63)) & 1) allowed.push_back(t);
      if (allowed.empty()) break;
      const int32_t pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(m.accept_token(pick));
      text += vocab->bytes(pick);
      texts.push_back(text);
      // Now and then, roll back a few tokens and check the mask is what it was.
      if (rng() % 7 == 0 && m.n_accepted() >= 2 && !m.terminated()) {
        const int32_t n = 1 + static_cast<int32_t>(rng() % 2);
        m.rollback(n);
        texts.resize(texts.size() - n);
        text = texts.back();
        ASSERT_EQ(m.mask(), naive_mask(*compiled, text, false)) << "after rollback to \"" << text << "\"";
      }
    }
  }
}

TEST(TokenMask, EqualsNaiveOnJson) { random_walks(json_grammar(), 1, 30, 40); }
TEST(TokenMask, EqualsNaiveOnFixedKeys) { random_walks(key_grammar(), 2, 20, 30); }

TEST(TokenMask, EqualsNaiveOnCountedStrings) {
  random_walks(counted_grammar(0, 40), 4, 10, 40);
  random_walks(counted_grammar(12, 30), 5, 10, 40);  // shares the cache with the grammar above
  random_walks(counted_grammar(3, 3), 6, 10, 10);
}

TEST(TokenMask, ForcedBytesAndTermination) {
  auto vocab = random_vocab(3, 200);
  auto compiled = std::make_shared<const CompiledGrammar>(key_grammar(), vocab);
  GrammarMatcher m(compiled);
  EXPECT_EQ(m.forced_bytes(), "{\"orderId\":");
  ASSERT_TRUE(m.accept_bytes("{\"orderId\":12"));
  EXPECT_EQ(m.forced_bytes(), "");  // a digit or the comma
  ASSERT_TRUE(m.accept_bytes(","));
  EXPECT_EQ(m.forced_bytes(), "\"name\":\"");
  EXPECT_FALSE(m.accept_bytes("x"));
  ASSERT_TRUE(m.accept_bytes("\"name\":\"ab\"}"));
  EXPECT_TRUE(m.accepting());
  const int32_t eos = vocab->stop_tokens()[0];
  const auto mask = m.mask();
  EXPECT_TRUE((mask[eos >> 6] >> (eos & 63)) & 1);
  ASSERT_TRUE(m.accept_token(eos));
  EXPECT_TRUE(m.terminated());
  for (uint64_t w : m.mask()) EXPECT_EQ(w, 0u);
  m.rollback(1);
  EXPECT_FALSE(m.terminated());
  EXPECT_TRUE(m.accepting());
}

}  // namespace
}  // namespace ridge::grammar
