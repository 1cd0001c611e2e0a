// SentencePiece-style BPE on a tiny vocabulary: score order, space prefix, byte fallback.
#include <gtest/gtest.h>

#include "tiny_vocabs.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

namespace {

std::vector<std::string> texts_of(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(tok.token_text(id));
  return out;
}

}  // namespace

TEST(Spm, MergesToTheBestScoredPieces) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  EXPECT_EQ(texts_of(tok, tok.encode("hello world", false, false)),
            (std::vector<std::string>{"\xE2\x96\x81hello", "\xE2\x96\x81world"}));
}

TEST(Spm, AddsBosAndThePrefixSpace) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  const auto ids = tok.encode("he", true, false);
  EXPECT_EQ(texts_of(tok, ids), (std::vector<std::string>{"<s>", "\xE2\x96\x81he"}));
  EXPECT_EQ(tok.decode(ids), "<s> he");
}

TEST(Spm, UnknownCharactersFallBackToByteTokens) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  EXPECT_EQ(texts_of(tok, tok.encode("é", false, false)),
            (std::vector<std::string>{"\xE2\x96\x81", "<0xC3>", "<0xA9>"}));
  EXPECT_EQ(tok.decode(tok.encode("é!", false, false)), " é!");
}

TEST(Spm, EmptyTextIsOnlyBos) {
  const Tokenizer tok(testing::tiny_spm_vocab());
  EXPECT_EQ(tok.encode("", true, true), (std::vector<int32_t>{tok.bos_id()}));
  EXPECT_TRUE(tok.encode("", false, true).empty());
}

}  // namespace ridge
