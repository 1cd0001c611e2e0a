// Token masks inside strings, where plain tokens are sorted by character count (token_sort.h),
// stacks are grouped by the frames they share and cut at a token's reach, and long walks go through
// the cache shared by grammars: every way must give the naive per-token mask, on a vocabulary of
// multi-byte characters, characters cut short, escapes and long runs.
#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "grammar/builder.h"
#include "naive_mask.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/regex.h"

namespace ridge::grammar {
namespace {

std::shared_ptr<const TokenVocab> text_vocab(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  // ASCII, 2-, 3- and 4-byte characters, U+2028 (refused by a pattern's '.'), escapes, controls.
  const std::vector<std::string> pieces = {"a", "b", "z", "0", "7", "-", "_", "/", " ", ".", ":", "\"", "\\", "\\n",
                                           "\n", "{", "}", "[", "]", "=", ",", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                           "\xE2\x80\xA8", "\xE2\x80\x94", "\x7F"};
  std::vector<std::string> tokens = {"\xC3", "\xE4\xB8", "\xF0\x9F", "\xF0\x9F\x98", "\xA9", "\xFF",
                                     "\xE0\x80",  // never a character's start
                                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",  // a long plain run
                                     "\",\"", "\"}", "\":", ""};
  for (const auto& p : pieces) tokens.push_back(p);
  while (static_cast<int>(tokens.size()) < n) {
    std::string t;
    const int len = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < len; ++k) t += pieces[rng() % pieces.size()];
    if (rng() % 5 == 0) t.resize(t.size() - 1);  // cut a character short now and then
    tokens.push_back(t);
  }
  const int32_t eos = static_cast<int32_t>(tokens.size());
  tokens.push_back("");
  return std::make_shared<const TokenVocab>(tokens, std::vector<int32_t>{eos});
}


// Random walks, each step's mask checked against the naive one, under every way of sorting.
void walks_equal_naive(const Grammar& grammar, uint64_t seed, int walks, int steps) {
  int checked = 0;
  const auto vocab = text_vocab(seed, 500);
  CompileLimits fast, trie_only, shared;
  trie_only.sort_plain_text = false;
  shared.share_walks_above = 0;
  for (const CompileLimits& limits : {fast, trie_only, shared}) {
    const auto compiled = std::make_shared<const CompiledGrammar>(grammar, vocab, limits);
    std::mt19937_64 rng(seed);
    for (int w = 0; w < walks; ++w) {
      GrammarMatcher m(compiled);
      std::string text;
      for (int step = 0; step < steps && !m.terminated(); ++step) {
        const auto mask = m.mask();
        ASSERT_EQ(mask, naive_mask(*compiled, text)) << "walk " << w << " after \"" << text << "\"";
        ++checked;
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t < vocab->n_vocab(); ++t)
          if ((mask[t >> 6] >> (t & 63)) & 1) allowed.push_back(t);
        if (allowed.empty()) break;
        const int32_t pick = allowed[rng() % allowed.size()];
        ASSERT_TRUE(m.accept_token(pick));
        if (m.terminated()) break;
        text += vocab->bytes(pick);
      }
    }
  }
  EXPECT_GT(checked, 3 * walks * 4);  // the walks went somewhere, all three ways
}

Grammar schema(const char* text) {
  JsonSchemaOptions options;
  return json_schema_grammar(nlohmann::ordered_json::parse(text), options);
}

TEST(PlainTextMask, UnboundedStringsEqualNaive) {
  walks_equal_naive(schema(R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},)"
                           R"("required":["a","b"],"additionalProperties":false})"),
                    11, 12, 30);
}

TEST(PlainTextMask, CountedStringsEqualNaive) {
  // Counts near either bound, so runs end inside tokens.
  walks_equal_naive(schema(R"({"type":"array","items":{"type":"string","minLength":3,"maxLength":9}})"), 12, 12, 30);
}

TEST(PlainTextMask, LongCountedStringsOfBlocksEqualNaive) {
  // Past the unary limit a length is spelled in blocks of 2^k characters: many stacks at once,
  // most of them cut at a token's reach.
  walks_equal_naive(schema(R"({"type":"string","minLength":2,"maxLength":70000})"), 13, 6, 40);
}

TEST(PlainTextMask, RestrictedCharactersEqualNaive) {
  // Some leads rejected all along the run ([^/]), a run ending on a state that reads other
  // characters (the name, then ']'), and '.' refusing U+2028.
  walks_equal_naive(schema(R"({"type":"string","pattern":"^[^/]{1,12}$"})"), 14, 10, 20);
  walks_equal_naive(regex_grammar("\\[[a-z0-9_.]{0,6}\\]=.{0,8}"), 15, 10, 20);
  walks_equal_naive(schema(R"({"type":"string","pattern":"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$","maxLength":20})"), 16, 10,
                    20);
}

TEST(PlainTextMask, EscapesAndNumbersBesideStringsEqualNaive) {
  walks_equal_naive(schema(R"({"type":"object","properties":{"s":{"type":"string","maxLength":5},)"
                           R"("n":{"type":"number"},"e":{"enum":["x\"y","a\\b","\u00e9\u4e2d"]}}})"),
                    17, 12, 30);
}

}  // namespace
}  // namespace ridge::grammar
