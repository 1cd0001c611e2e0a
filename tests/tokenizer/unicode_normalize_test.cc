// The generated normalisation tables against hand-checked code points (Unicode charts, and what
// tokenizers 0.22 does where its crates' Unicode versions differ from today's).
#include <gtest/gtest.h>

#include "tokenizer/bert_normalizer.h"
#include "tokenizer/unicode_normalize.h"

namespace ridge::unicode {

namespace {

std::vector<uint32_t> nfd(std::vector<uint32_t> cpts) {
  to_nfd(cpts);
  return cpts;
}

std::vector<uint32_t> lower(uint32_t cpt) {
  const Lowercase l = to_lowercase(cpt);
  return {l.cpt, l.cpt + l.size};
}

}  // namespace

TEST(UnicodeNormalize, CanonicalDecomposition) {
  EXPECT_EQ(nfd({0xE9}), (std::vector<uint32_t>{'e', 0x301}));           // é
  EXPECT_EQ(nfd({0xC5}), (std::vector<uint32_t>{'A', 0x30A}));           // Å
  EXPECT_EQ(nfd({0x212B}), (std::vector<uint32_t>{'A', 0x30A}));         // Å ANGSTROM SIGN, through U+00C5
  EXPECT_EQ(nfd({0x1E69}), (std::vector<uint32_t>{'s', 0x323, 0x307}));  // ṩ: recursive, dot below first
  EXPECT_EQ(nfd({0x130}), (std::vector<uint32_t>{'I', 0x307}));          // İ
  EXPECT_EQ(nfd({0xDF}), (std::vector<uint32_t>{0xDF}));                 // ß has none
  EXPECT_EQ(nfd({0xFB01}), (std::vector<uint32_t>{0xFB01}));             // ﬁ: compatibility only, not NFD
  EXPECT_EQ(nfd({0x11938}), (std::vector<uint32_t>{0x11938}));           // Unicode 13: tokenizers' NFD predates it
}

TEST(UnicodeNormalize, HangulByArithmetic) {
  EXPECT_EQ(nfd({0xD55C}), (std::vector<uint32_t>{0x1112, 0x1161, 0x11AB}));  // 한
  EXPECT_EQ(nfd({0xAC00}), (std::vector<uint32_t>{0x1100, 0x1161}));          // 가: no trailing consonant
  EXPECT_EQ(nfd({0xD7A3}), (std::vector<uint32_t>{0x1112, 0x1175, 0x11C2}));  // the last syllable
  EXPECT_EQ(nfd({0x1100}), (std::vector<uint32_t>{0x1100}));                  // a jamo stays
}

TEST(UnicodeNormalize, CanonicalOrderingIsStableByClass) {
  EXPECT_EQ(combining_class('a'), 0);
  EXPECT_EQ(combining_class(0x301), 230);
  EXPECT_EQ(combining_class(0x323), 220);
  EXPECT_EQ(nfd({'a', 0x301, 0x323}), (std::vector<uint32_t>{'a', 0x323, 0x301}));
  EXPECT_EQ(nfd({'a', 0x323, 0x301}), (std::vector<uint32_t>{'a', 0x323, 0x301}));
  EXPECT_EQ(nfd({'a', 0x301, 0x300}), (std::vector<uint32_t>{'a', 0x301, 0x300}));  // equal classes keep order
  EXPECT_EQ(nfd({0x301, 'a', 0x323}), (std::vector<uint32_t>{0x301, 'a', 0x323}));  // a starter ends a run
}

TEST(UnicodeNormalize, LowercaseAsRust) {
  EXPECT_EQ(lower('A'), (std::vector<uint32_t>{'a'}));
  EXPECT_EQ(lower(0xC9), (std::vector<uint32_t>{0xE9}));           // É
  EXPECT_EQ(lower(0x130), (std::vector<uint32_t>{'i', 0x307}));    // İ: SpecialCasing, two code points
  EXPECT_EQ(lower(0xDF), (std::vector<uint32_t>{0xDF}));           // ß stays ß
  EXPECT_EQ(lower(0x1E9E), (std::vector<uint32_t>{0xDF}));         // ẞ -> ß
  EXPECT_EQ(lower(0x3A3), (std::vector<uint32_t>{0x3C3}));         // Σ -> σ, never the final ς
  EXPECT_EQ(lower(0x1C5), (std::vector<uint32_t>{0x1C6}));         // ǅ (title case)
  EXPECT_EQ(lower(0x100), (std::vector<uint32_t>{0x101}));         // a stride-2 run
  EXPECT_EQ(lower(0x101), (std::vector<uint32_t>{0x101}));         // ... whose odd members are lowercase
  EXPECT_EQ(lower(0x212A), (std::vector<uint32_t>{'k'}));          // KELVIN SIGN
  EXPECT_EQ(lower(0x10400), (std::vector<uint32_t>{0x10428}));     // Deseret
  EXPECT_EQ(lower(0xA7CB), (std::vector<uint32_t>{0x264}));        // Unicode 16, from Rust's std
  EXPECT_EQ(lower('1'), (std::vector<uint32_t>{'1'}));
}

TEST(UnicodeNormalize, Classes) {
  EXPECT_TRUE(is_nonspacing_mark(0x301));
  EXPECT_FALSE(is_nonspacing_mark(0x93E));  // Devanagari AA: Mc, kept by strip_accents
  EXPECT_TRUE(is_combining_mark(0x93E));    // ... but dropped by StripAccents
  EXPECT_FALSE(is_nonspacing_mark('e'));
  EXPECT_TRUE(is_bert_punctuation('$'));     // ASCII punctuation, though Sc
  EXPECT_TRUE(is_bert_punctuation(0xBF));    // ¿
  EXPECT_FALSE(is_bert_punctuation(0x20AC)); // €
  EXPECT_TRUE(is_bert_punctuation(0x166D));  // Po in the older Unicode of tokenizers' crate (So today)
  EXPECT_FALSE(is_bert_punctuation(0x2E4F)); // too new for that crate
  EXPECT_TRUE(is_bert_whitespace(0x3000));
  EXPECT_TRUE(is_bert_whitespace(0xA0));
  EXPECT_FALSE(is_bert_whitespace(0x200B));
  EXPECT_TRUE(is_bert_control(0x1));
  EXPECT_TRUE(is_bert_control(0xAD));   // soft hyphen (Cf)
  EXPECT_TRUE(is_bert_control(0xE000)); // private use
  EXPECT_FALSE(is_bert_control('\t'));
  EXPECT_FALSE(is_bert_control(0x378)); // unassigned: kept
  EXPECT_TRUE(is_cjk_ideograph(0x4E2D));
  EXPECT_TRUE(is_cjk_ideograph(0x20000));
  EXPECT_FALSE(is_cjk_ideograph(0x2B820));  // tokenizers' fifth range starts at U+2B920
  EXPECT_FALSE(is_cjk_ideograph(0x3042));   // hiragana
}

TEST(BertNormalizer, Steps) {
  const TextNormalizer uncased = TextNormalizer::bert(true, true, true, true);
  EXPECT_EQ(uncased.normalize("Café İ ß Å"), "cafe i ß a");
  EXPECT_EQ(uncased.normalize("a\tb\nc\x01" "d\u00a0e"), "a b cd e");
  EXPECT_EQ(uncased.normalize("x中y"), "x 中 y");
  EXPECT_EQ(uncased.normalize("\xC3("), "(");  // invalid UTF-8 -> U+FFFD -> removed
  EXPECT_EQ(uncased.normalize("한"), "\u1112\u1161\u11AB");
  const TextNormalizer cased = TextNormalizer::bert(true, true, false, false);
  EXPECT_EQ(cased.normalize("Café"), "Café");
  const WordSplitter bert;
  EXPECT_EQ(bert.split("hello, world!! a\u3000b"),
            (std::vector<std::string>{"hello", ",", "world", "!", "!", "a", "b"}));
}

}  // namespace ridge::unicode
