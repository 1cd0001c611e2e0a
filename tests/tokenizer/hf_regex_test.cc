// ridge's small regex engine for tokenizer.json Split patterns: matches as Oniguruma (through the
// tokenizers package) splits the same text, and clear errors for what it does not support.
#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/hf/hf_regex.h"
#include "tokenizer/utf8.h"

namespace ridge::hf {
namespace {

// The text cut at the matches: matches and the stretches between them, in order (Split's Isolated).
std::vector<std::string> isolate(std::string_view pattern, std::string_view text) {
  const std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  auto piece = [&](size_t begin, size_t end) {
    std::string s;
    for (size_t i = begin; i < end; ++i) utf8::append(s, cpts[i]);
    return s;
  };
  std::vector<std::string> out;
  size_t gap = 0;
  for (const auto& [begin, end] : Regex::compile(pattern).find_all(cpts)) {
    if (gap < begin) out.push_back(piece(gap, begin));
    out.push_back(piece(begin, end));
    gap = end;
  }
  if (gap < cpts.size()) out.push_back(piece(gap, cpts.size()));
  return out;
}

using Strings = std::vector<std::string>;

TEST(HfRegex, MatchesAsOniguruma) {
  EXPECT_EQ(isolate(R"(\p{N}{1,3})", "a12345b"), (Strings{"a", "123", "45", "b"}));
  EXPECT_EQ(isolate(R"([^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
                    "Hello,  world!!\n\n ok"),
            (Strings{"Hello", ",", " ", " world", "!!\n\n", " ok"}));
  EXPECT_EQ(isolate(R"((?i:ab|c)+?d)", "ABcd abd"), (Strings{"ABcd", " ", "abd"}));
  EXPECT_EQ(isolate(R"([\w.-]+@\w+)", "me.x@host y"), (Strings{"me.x@host", " y"}));
  EXPECT_EQ(isolate(R"((?=ab)a|b(?!c))", "ab bc b"), (Strings{"a", "b", " bc ", "b"}));
  EXPECT_EQ(isolate(R"([^\s]+)", "a\u00a0b c"), (Strings{"a", "\u00a0", "b", " ", "c"}));
  EXPECT_EQ(isolate(R"(\x41\x{1F600})", "A\U0001F600"), (Strings{"A\U0001F600"}));
  EXPECT_EQ(isolate(R"([\p{Lu}\p{Lt}]*[\p{Ll}\p{Lo}]+|\P{Ll}+)", "HelloWORLD\u01c5a\u4f60x"),
            (Strings{"Hello", "WORLD\u01c5a\u4f60x"}));
  EXPECT_EQ(isolate("[\u4e00-\u9fa5]+", "ab\u4f60\u597d!"), (Strings{"ab", "\u4f60\u597d", "!"}));
}

TEST(HfRegex, LongRunsDoNotRecurse) {
  const std::string run(200000, 'a');
  EXPECT_EQ(isolate(R"(\p{L}+|\s+(?!\S))", run + "  b").size(), 4u);  // "aaa..", " ", " " (a gap), "b"
}

TEST(HfRegex, UnsupportedSyntaxIsNamed) {
  for (const char* pattern : {R"(\p{Greek}+)", R"((?<=a)b)", R"(^a)", R"(a$)", R"(\1)", R"([[a]])", R"((a)", R"(a))",
                              R"(*a)", R"(a{3,1})", R"([z-a])", R"(\q)"}) {
    try {
      Regex::compile(pattern);
      ADD_FAILURE() << pattern << " compiled";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(pattern), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ridge::hf
