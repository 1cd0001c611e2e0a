// Pre-tokenizer splits on inputs where the regexes are easy to get wrong.
#include <gtest/gtest.h>

#include "tokenizer/pre_tokenizer.h"

namespace ridge {

using Words = std::vector<std::string>;

TEST(PreTokenizer, Gpt2WordsKeepTheirLeadingSpace) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "Hello world!"), (Words{"Hello", " world", "!"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "it's 42"), (Words{"it", "'s", " 42"}));
}

TEST(PreTokenizer, Gpt2SpaceRunsLeaveTheLastSpaceToTheNextWord) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "a   b"), (Words{"a", "  ", " b"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "a   "), (Words{"a", "   "}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "\n\nx"), (Words{"\n", "\n", "x"}));
}

TEST(PreTokenizer, Gpt2ContractionsAreLowercaseOnly) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "IT'S"), (Words{"IT", "'", "S"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "we'll"), (Words{"we", "'ll"}));
}

TEST(PreTokenizer, SmollmIsolatesEveryDigit) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kSmollm, "x 123"), (Words{"x", " ", "1", "2", "3"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kSmollm, "٣٤"), (Words{"٣", "٤"}));
}

TEST(PreTokenizer, Llama3GroupsDigitsByThreeAndFoldsCase) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kLlama3, "1234567"), (Words{"123", "456", "7"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kLlama3, "IT'S"), (Words{"IT", "'S"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kLlama3, "(hello)"), (Words{"(hello", ")"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kLlama3, "x  \n\n y"), (Words{"x", "  \n\n", " y"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kLlama3, "...\n\nz"), (Words{"...\n\n", "z"}));
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kQwen2, "a123"), (Words{"a", "1", "2", "3"}));
}

TEST(PreTokenizer, DefaultSplitsPunctuationRunsAndDigitTriples) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kDefault, "a+=b"), (Words{"a", "+=", "b"}));
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kDefault, "12345"), (Words{"123", "45"}));
}

TEST(PreTokenizer, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(pre_tokenize(PreTokenizerType::kGpt2, "a\xFF"), (Words{"a", "\xEF\xBF\xBD"}));
}

TEST(PreTokenizer, WordsConcatenateToTheInput) {
  const std::string text = "  Mixed 文本 with émoji 🙂🙂, tabs\t\tand 12,345.6 numbers!\r\n";
  for (auto type : {PreTokenizerType::kDefault, PreTokenizerType::kGpt2, PreTokenizerType::kLlama3,
                    PreTokenizerType::kQwen2, PreTokenizerType::kSmollm}) {
    std::string joined;
    for (const auto& w : pre_tokenize(type, text)) joined += w;
    EXPECT_EQ(joined, text) << pre_tokenizer_name(type);
  }
}

TEST(PreTokenizer, NamesMapToTypes) {
  EXPECT_EQ(pre_tokenizer_for("smollm")->type, PreTokenizerType::kSmollm);
  EXPECT_EQ(pre_tokenizer_for("llama-bpe")->type, PreTokenizerType::kLlama3);
  EXPECT_TRUE(pre_tokenizer_for("llama-bpe")->ignore_merges);
  EXPECT_EQ(pre_tokenizer_for("qwen2")->type, PreTokenizerType::kQwen2);
  EXPECT_EQ(pre_tokenizer_for("")->type, PreTokenizerType::kDefault);
  EXPECT_FALSE(pre_tokenizer_for("no-such-pre").has_value());
}

}  // namespace ridge
