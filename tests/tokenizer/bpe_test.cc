// Byte-level BPE on a tiny vocabulary: merge order follows rank, bytes always have a token.
#include <gtest/gtest.h>

#include "tiny_vocabs.h"
#include "tokenizer/bpe.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

namespace {

std::vector<std::string> texts_of(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(tok.token_text(id));
  return out;
}

}  // namespace

TEST(Bpe, MergesByRank) {
  const auto vocab = testing::tiny_bpe_vocab();
  EXPECT_EQ(bpe_merge_word(*vocab, "lower"), (std::vector<std::string>{"lower"}));
  EXPECT_EQ(bpe_merge_word(*vocab, "Ġlow"), (std::vector<std::string>{"Ġlow"}));
  // "lo" (rank 0) is taken before "Ġl" (rank 5); there is no "Ġ lo" merge, so "Ġ" stays alone.
  EXPECT_EQ(bpe_merge_word(*vocab, "Ġlo"), (std::vector<std::string>{"Ġ", "lo"}));
  EXPECT_EQ(bpe_merge_word(*vocab, "xyz"), (std::vector<std::string>{"x", "y", "z"}));
}

TEST(Bpe, EncodesThroughThePreTokenizerAndByteAlphabet) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  EXPECT_EQ(texts_of(tok, tok.encode("lower low", false, false)), (std::vector<std::string>{"lower", "Ġlow"}));
  // Non-ASCII text falls apart into byte tokens: é is C3 A9 -> "Ã" "©".
  EXPECT_EQ(texts_of(tok, tok.encode("é", false, false)), (std::vector<std::string>{"Ã", "©"}));
}

TEST(Bpe, DecodeRestoresTheBytes) {
  const Tokenizer tok(testing::tiny_bpe_vocab());
  for (const std::string text : {"lower low", "héllo wörld 🙂", "tabs\tand\nnewlines  "}) {
    EXPECT_EQ(tok.decode(tok.encode(text, false, false)), text);
  }
}

}  // namespace ridge
