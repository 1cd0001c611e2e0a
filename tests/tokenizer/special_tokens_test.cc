// Special-token parsing: control tokens only with parse_special, user-defined ones always,
// longest text first.
#include <gtest/gtest.h>

#include "tiny_vocabs.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

TEST(SpecialTokens, ControlTokensNeedParseSpecial) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  const int32_t start = tok.find_token("<|im_start|>");
  const auto parsed = tok.encode("low<|im_start|>low", false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{tok.find_token("low"), start, tok.find_token("low")}));
  const auto plain = tok.encode("low<|im_start|>low", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), start), 0);
  EXPECT_EQ(tok.decode(plain), "low<|im_start|>low");
}

TEST(SpecialTokens, UserDefinedTokensAreAlwaysRecognised) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  const int32_t tool = tok.find_token("<tool>");
  EXPECT_EQ(tok.encode("<tool>", false, false), (std::vector<int32_t>{tool}));
}

TEST(SpecialTokens, LongestTextWins) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  EXPECT_EQ(tok.encode("<|im_start|>x<|im_start|>", false, true),
            (std::vector<int32_t>{tok.find_token("<|im_start|>x"), tok.find_token("<|im_start|>")}));
}

TEST(SpecialTokens, StripAttributesSwallowNeighbouringSpaces) {
  auto vocab = testing::tiny_bpe_vocab();
  vocab->attr[vocab->find("<tool>")] |= kAttrLstrip | kAttrRstrip;
  const auto fragments = partition_special(*vocab, "a  <tool>  b", false);
  ASSERT_EQ(fragments.size(), 3u);
  EXPECT_EQ(fragments[0].length, 1u);
  EXPECT_EQ(fragments[1].token, vocab->find("<tool>"));
  EXPECT_EQ(fragments[2].offset, 11u);
}

TEST(SpecialTokens, EndOfGenerationAndSpecialFlags) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  EXPECT_TRUE(tok.is_end_of_generation(tok.find_token("<|endoftext|>")));
  EXPECT_FALSE(tok.is_end_of_generation(tok.find_token("low")));
  EXPECT_TRUE(tok.is_special(tok.find_token("<tool>")));
  EXPECT_FALSE(tok.is_special(tok.find_token("low")));
}

}  // namespace ridge
