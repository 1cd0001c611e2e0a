// Tokenizer::from_hf_dir on small hand-made tokenizer.json files: each model type, added tokens,
// post-processors and the side files. Expected ids were checked against the tokenizers package.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/hf/hf_pipeline.h"
#include "tokenizer/tokenizer.h"
#include "hf_json_files.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::HfDir;
using Ids = std::vector<int32_t>;

json added(int id, const std::string& content, bool special, json extra = json::object()) {
  json a = {{"id", id}, {"content", content}, {"special", special}, {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", !special}};
  a.update(extra);
  return a;
}

// Byte-level BPE: "hello world" with merges h+e, l+l, ll+o.
json byte_level_bpe() {
  json vocab = json::object();
  int id = 0;
  for (const char* t : {"h", "e", "l", "o", "\xC4\xA0", "w", "r", "d", "he", "ll", "llo", "<|end|>"}) vocab[t] = id++;
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"h e", "l l", "ll o"}}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"added_tokens", {added(11, "<|end|>", true)}}};
}

TEST(HfTokenizer, ByteLevelBpeMergesByRank) {
  HfDir d;
  d.write("tokenizer.json", byte_level_bpe().dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.encode("hello world", true, true), (Ids{8, 10, 4, 5, 3, 6, 2, 7}));
  EXPECT_EQ(t.decode(Ids{8, 10, 4, 5, 3, 6, 2, 7}), "hello world");
  EXPECT_EQ(t.token_to_piece(4), " ");
  // Special-token text is its token, or plain text when parse_special is off.
  EXPECT_EQ(t.encode("he<|end|>", false, true), (Ids{8, 11}));
  // As plain text the model sees it: '<', '|', 'n' and '>' have no tokens and are dropped, as tokenizers does.
  EXPECT_EQ(t.encode("he<|end|>", false, false), (Ids{8, 1, 7}));
  EXPECT_TRUE(t.is_special(11));
  EXPECT_EQ(t.n_vocab(), 12);
}

TEST(HfTokenizer, MergesAsPairsAndIgnoreMerges) {
  json j = byte_level_bpe();
  j["model"]["merges"] = json::array({json::array({"h", "e"}), json::array({"l", "l"}), json::array({"ll", "o"})});
  HfDir a;
  a.write("tokenizer.json", j.dump());
  EXPECT_EQ(Tokenizer::from_hf_dir(a.dir()).encode("hello", false, true), (Ids{8, 10}));
  // ignore_merges: a word that is a token is taken whole; without it, merges decide ("llo" -> ll + o is
  // not a merge path here, so "llo" alone is 10 either way; "ll" stays "ll").
  j["model"]["vocab"]["hello"] = 12;
  j["model"]["ignore_merges"] = true;
  HfDir b;
  b.write("tokenizer.json", j.dump());
  EXPECT_EQ(Tokenizer::from_hf_dir(b.dir()).encode("hello", false, true), (Ids{12}));
}

// SentencePiece-style BPE: Prepend + Replace normalizers, byte fallback, fused unknowns, Llama's decoder.
json spm_bpe(bool byte_fallback) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"<0xC3>", 3}, {"<0xA9>", 4}, {"\xE2\x96\x81", 5},
                {"a", 6}, {"b", 7}, {"\xE2\x96\x81" "a", 8}, {"ab", 9}, {"\xE2\x96\x81" "ab", 10}};
  return {{"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
          {"pre_tokenizer", nullptr},
          {"model",
           {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\xE2\x96\x81 a", "a b", "\xE2\x96\x81" "a b"}},
            {"unk_token", "<unk>"}, {"byte_fallback", byte_fallback}, {"fuse_unk", true}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"pair", json::array()},
            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
          {"decoder",
           {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"added_tokens", {added(0, "<unk>", true), added(1, "<s>", true), added(2, "</s>", true)}}};
}

TEST(HfTokenizer, SentencePieceBpeWithByteFallback) {
  HfDir d;
  d.write("tokenizer.json", spm_bpe(true).dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.encode("ab a", true, true), (Ids{1, 10, 8}));
  EXPECT_EQ(t.encode("\xC3\xA9", false, true), (Ids{5, 3, 4}));  // "é" has no token: its bytes
  EXPECT_EQ(t.encode("", true, true), (Ids{1}));
  EXPECT_TRUE(t.add_bos());
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.decode(Ids{1, 10, 8, 3, 4}), "<s> ab a\xC3\xA9");  // Strip only trims the fused text's start
  EXPECT_EQ(t.decode(Ids{10, 8}), "ab a");             // the first space stripped
  EXPECT_EQ(t.token_to_piece(8), " a");                // a streamed piece keeps it
  EXPECT_EQ(t.token_to_piece(3), "\xC3");              // raw byte for the streaming decoder
  EXPECT_EQ(t.decode(Ids{3}), "\xEF\xBF\xBD");         // a lone byte decodes to U+FFFD
}

TEST(HfTokenizer, UnknownCharactersFuseWithoutByteFallback) {
  HfDir d;
  d.write("tokenizer.json", spm_bpe(false).dump());
  EXPECT_EQ(Tokenizer::from_hf_dir(d.dir()).encode("a\xC3\xA9\xC3\xA9", false, true), (Ids{8, 0}));
}

TEST(HfTokenizer, UnigramViterbiUnknownAndByteFallback) {
  json vocab = json::array();
  for (const auto& [piece, score] : std::vector<std::pair<std::string, double>>{
           {"<unk>", 0.0}, {"\xE2\x96\x81", -2.0}, {"a", -3.0}, {"b", -3.0}, {"ab", -4.0},
           {"\xE2\x96\x81" "a", -1.0}, {"<0xC3>", -10.0}, {"<0xA9>", -10.0}})
    vocab.push_back(json::array({piece, score}));
  json j = {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}, {"byte_fallback", true}}},
            {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}}},
            {"decoder", {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}}}};
  HfDir d;
  d.write("tokenizer.json", j.dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  // "▁ab": ▁a + b scores -4, ▁ + ab scores -6: the first wins.
  EXPECT_EQ(t.encode("ab", false, true), (Ids{5, 3}));
  EXPECT_EQ(t.encode("a\xC3\xA9", false, true), (Ids{5, 6, 7}));  // "é" unknown -> its byte tokens
  EXPECT_EQ(t.decode(Ids{5, 3, 1, 2}), "ab a");
  j["model"]["byte_fallback"] = false;
  HfDir e;
  e.write("tokenizer.json", j.dump());
  EXPECT_EQ(Tokenizer::from_hf_dir(e.dir()).encode("a\xC3\xA9\xC3\xA9", false, true), (Ids{5, 0}));  // fused
}

TEST(HfTokenizer, WordPieceWithBertPipeline) {
  const json vocab = {{"[PAD]", 0}, {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}, {"un", 4}, {"##aff", 5}, {"##able", 6},
                      {"!", 7}, {"hello", 8}};
  json j = {{"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
            {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
            {"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
                       {"max_input_chars_per_word", 10}, {"vocab", vocab}}},
            {"post_processor", {{"type", "BertProcessing"}, {"cls", {"[CLS]", 2}}, {"sep", {"[SEP]", 3}}}},
            {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
            {"added_tokens", {added(2, "[CLS]", true), added(3, "[SEP]", true)}}};
  HfDir d;
  d.write("tokenizer.json", j.dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.encode("UnAffable Hello!", true, true), (Ids{2, 4, 5, 6, 8, 7, 3}));
  EXPECT_EQ(t.encode("unaffableunaffable xyz", false, true), (Ids{1, 1}));  // too long; no pieces
  EXPECT_EQ(t.decode(Ids{4, 5, 6, 8, 7}), "unaffable hello!");
}

TEST(HfTokenizer, AddedTokenStripAndSingleWord) {
  json j = byte_level_bpe();
  j["added_tokens"] = {added(11, "<|end|>", true, {{"lstrip", true}, {"rstrip", true}}),
                       added(12, "wd", false, {{"single_word", true}, {"normalized", false}})};
  HfDir d;
  d.write("tokenizer.json", j.dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.encode("lo  <|end|>  wd", false, true), (Ids{2, 3, 11, 12}));  // spaces taken by the token
  EXPECT_EQ(t.encode("dwd", false, true), (Ids{7, 5, 7}));                   // "wd" inside a word: no match
  EXPECT_TRUE(t.is_special(12));                                             // user-defined
}

TEST(HfTokenizer, PostProcessorsAndSideFiles) {
  json j = byte_level_bpe();
  j["post_processor"] = {{"type", "Sequence"},
                         {"processors",
                          {{{"type", "ByteLevel"}},
                           {{"type", "RobertaProcessing"}, {"cls", {"h", 0}}, {"sep", {"<|end|>", 11}}}}}};
  HfDir d;
  d.write("tokenizer.json", j.dump())
      .write("tokenizer_config.json",
             json({{"bos_token", {{"content", "h"}, {"special", true}}}, {"eos_token", "<|end|>"},
                   {"model_max_length", 4096},
                   {"chat_template", {{{"name", "tool_use"}, {"template", "T"}}, {{"name", "default"}, {"template", "D"}}}}})
                 .dump())
      .write("generation_config.json", json({{"eos_token_id", {11, 4}}}).dump());
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.encode("he", true, true), (Ids{0, 8, 11}));
  EXPECT_TRUE(t.add_bos());
  EXPECT_TRUE(t.add_eos());
  EXPECT_EQ(t.eos_id(), 11);
  EXPECT_TRUE(t.is_end_of_generation(11));
  EXPECT_TRUE(t.is_end_of_generation(4));
  EXPECT_FALSE(t.is_end_of_generation(0));
  EXPECT_EQ(t.chat_template(), "D");
  EXPECT_EQ(t.model_max_length(), 4096);
}

TEST(HfTokenizer, ConfigWithoutTemplateFallsBackToJinjaFile) {
  HfDir d;
  d.write("tokenizer.json", byte_level_bpe().dump())
      .write("tokenizer_config.json", json({{"model_max_length", 1e30}}).dump())
      .write("chat_template.jinja", "{{ messages }}");
  const Tokenizer t = Tokenizer::from_hf_dir(d.dir());
  EXPECT_EQ(t.chat_template(), "{{ messages }}");
  EXPECT_EQ(t.model_max_length(), 0);  // transformers' "no limit"
  EXPECT_FALSE(t.add_bos());
}

}  // namespace
}  // namespace ridge
