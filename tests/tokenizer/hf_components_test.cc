// tokenizer.json's normalizers, pre-tokenizers and decoders, one at a time, read from their JSON
// and run alone. Expected outputs are what the tokenizers package gives for the same component.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/hf/hf_json.h"
#include "tokenizer/hf/hf_pipeline.h"

namespace ridge::hf {
namespace {

using Strings = std::vector<std::string>;

std::string normalized(const json& normalizer, const std::string& text) {
  Pipeline p;
  load_text_steps({{"normalizer", normalizer}}, p);
  return normalize(p.normalizer, text);
}

Strings words(const json& pre_tokenizer, const std::string& text) {
  Pipeline p;
  load_text_steps({{"pre_tokenizer", pre_tokenizer}}, p);
  Strings out;
  for (const Piece& piece : pre_tokenize(p.pre_tokenizer, {{text, true}})) out.push_back(piece.text);
  return out;
}

std::string decoded(const json& decoder, const Strings& tokens) {
  Pipeline p;
  load_text_steps({{"decoder", decoder}}, p);
  std::string out;
  for (const std::string& t : decode_chain(p.decoder, tokens)) out += t;
  return out;
}

json split(const char* pattern, const char* behavior, bool invert = false) {
  return {{"type", "Split"}, {"pattern", {{"String", pattern}}}, {"behavior", behavior}, {"invert", invert}};
}

TEST(HfNormalizer, UnicodeForms) {
  EXPECT_EQ(normalized({{"type", "NFC"}}, "cafe\u0301 \u1100\u1161\u11a8"), "caf\u00e9 \uac01");
  EXPECT_EQ(normalized({{"type", "NFD"}}, "caf\u00e9"), "cafe\u0301");
  EXPECT_EQ(normalized({{"type", "NFKC"}}, "\ufb01 \u2460 \uff21"), "fi 1 A");
  EXPECT_EQ(normalized({{"type", "NFKD"}}, "\u00bd\u00e9"), "1\u20442e\u0301");
}

TEST(HfNormalizer, TextSteps) {
  EXPECT_EQ(normalized({{"type", "Lowercase"}}, "\u00c0B\u0130"), "\u00e0bi\u0307");
  EXPECT_EQ(normalized({{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}}, "  a  "), "a  ");
  EXPECT_EQ(normalized({{"type", "StripAccents"}}, "e\u0301a\u0308"), "ea");
  const json spm = {{"type", "Sequence"},
                    {"normalizers",
                     {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                      {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
  EXPECT_EQ(normalized(spm, "a b"), "\u2581a\u2581b");
  EXPECT_EQ(normalized(spm, ""), "");  // Prepend leaves empty text empty
  EXPECT_EQ(normalized({{"type", "Replace"}, {"pattern", {{"Regex", "ab"}}}, {"content", "x"}}, "abab"), "xx");
  EXPECT_EQ(normalized({{"type", "ByteLevel"}}, "a \u00e9\n"), "a\u0120\u00c3\u00a9\u010a");
  EXPECT_EQ(normalized({{"type", "BertNormalizer"}}, "H\u00e9llo\t\u4f60"), "hello  \u4f60 ");
}

TEST(HfPreTokenizer, SplitBehaviors) {
  EXPECT_EQ(words(split("-", "Isolated"), "a-b--c-"), (Strings{"a", "-", "b", "-", "-", "c", "-"}));
  EXPECT_EQ(words(split("-", "Removed"), "a-b--c-"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(words(split("-", "MergedWithPrevious"), "a-b--c-"), (Strings{"a-", "b-", "-", "c-"}));
  EXPECT_EQ(words(split("-", "MergedWithNext"), "a-b--c-"), (Strings{"a", "-b", "-", "-c", "-"}));
  EXPECT_EQ(words(split("-", "Contiguous"), "a-b--c-"), (Strings{"a", "-", "b", "--", "c", "-"}));
  EXPECT_EQ(words(split("-", "Removed", true), "a-b--c-"), (Strings{"-", "-", "-", "-"}));
}

TEST(HfPreTokenizer, Metaspace) {
  EXPECT_EQ(words({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}, {"split", true}}, "hi  there"),
            (Strings{"\u2581hi", "\u2581", "\u2581there"}));
  EXPECT_EQ(words({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "never"}, {"split", false}}, "hi there"),
            (Strings{"hi\u2581there"}));
  const json first = {{"type", "Sequence"},
                      {"pretokenizers",
                       {split("x", "Isolated"),
                        {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", true}}}}};
  EXPECT_EQ(words(first, "axb c"), (Strings{"\u2581a", "x", "b", "\u2581c"}));
}

TEST(HfPreTokenizer, CharacterClasses) {
  EXPECT_EQ(words({{"type", "Whitespace"}}, "Hey, you!  ok_1"), (Strings{"Hey", ",", "you", "!", "ok_1"}));
  // \w takes the zero-width joiners, not the zero-width space, and no "other number" (², ½).
  EXPECT_EQ(words({{"type", "Whitespace"}}, "x\u00b2\u00bd 2\u2167"), (Strings{"x", "\u00b2\u00bd", "2\u2167"}));
  EXPECT_EQ(words({{"type", "Whitespace"}}, "zero\u200dwidth a\u200bb \U0001F468\u200d\U0001F469"),
            (Strings{"zero\u200dwidth", "a", "\u200b", "b", "\U0001F468", "\u200d", "\U0001F469"}));
  EXPECT_EQ(words({{"type", "WhitespaceSplit"}}, " a\tb\u3000c "), (Strings{"a", "b", "c"}));
  EXPECT_EQ(words({{"type", "Punctuation"}}, "a,b.!c"), (Strings{"a", ",", "b", ".", "!", "c"}));
  EXPECT_EQ(words({{"type", "Digits"}, {"individual_digits", true}}, "a123b"), (Strings{"a", "1", "2", "3", "b"}));
  EXPECT_EQ(words({{"type", "Digits"}, {"individual_digits", false}}, "a123b45"), (Strings{"a", "123", "b", "45"}));
  EXPECT_EQ(words({{"type", "BertPreTokenizer"}}, "Hi, there!"), (Strings{"Hi", ",", "there", "!"}));
  EXPECT_EQ(words({{"type", "CharDelimiterSplit"}, {"delimiter", "x"}}, "axbxxc"), (Strings{"a", "b", "c"}));
}

TEST(HfPreTokenizer, ByteLevelAndKnownRegexes) {
  EXPECT_EQ(words({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}, "Hello  world's 123"),
            (Strings{"\u0120Hello", "\u0120", "\u0120world", "'s", "\u0120123"}));
  const json qwen = {{"type", "Split"},
                     {"pattern",
                      {{"Regex",
                        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
                     {"behavior", "Isolated"}};
  EXPECT_EQ(words(qwen, "It'S 42!\n\n  x"), (Strings{"It", "'S", " ", "4", "2", "!\n\n", " ", " x"}));
}

TEST(HfDecoder, Steps) {
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}}, {"\u2581Hi", "\u2581there"}),
            "Hi there");
  EXPECT_EQ(decoded({{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}, {"un", "##able", "do", "n't", "."}),
            "unable don't.");
  const json fallback = {{"type", "Sequence"}, {"decoders", {{{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}};
  EXPECT_EQ(decoded(fallback, {"a", "<0xE2>", "<0x82>", "<0xAC>", "b"}), "a\u20acb");
  EXPECT_EQ(decoded(fallback, {"a", "<0xE2>", "<0x82>", "<0xAC>", "<0xFF>", "b"}), "a\ufffd\ufffd\ufffd\ufffdb");
  EXPECT_EQ(decoded({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 1}}, {" a ", "  b  "}), "a b ");
  EXPECT_EQ(decoded({{"type", "ByteLevel"}}, {"Hello", "\u0120world", "\u010a"}), "Hello world\n");
}

}  // namespace
}  // namespace ridge::hf
