// WordPieceTokenizer on a hand-built vocabulary: greedy pieces, unknown words, the BERT
// normaliser and pre-tokenizer, added tokens, templates, truncation, decoding and the loaders.
// Expected ids were checked against Hugging Face tokenizers 0.22 on the same tokenizer.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "tiny_wordpiece.h"
#include "tokenizer/wordpiece.h"

namespace ridge {

namespace {

using testing::kVocab;
using testing::tokenizer_json;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ridge_wp_" + std::to_string(getpid()) + "_" + name)).string();
}

// A file that lives as long as the test needs it.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) : path_(temp_path(name)) { std::ofstream(path_) << text; }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

WordPieceTokenizer load_json(const std::string& text) {
  return WordPieceTokenizer::from_tokenizer_json(TempFile("tokenizer.json", text).path());
}

const WordPieceTokenizer& tiny() {
  static const WordPieceTokenizer tok = load_json(tokenizer_json());
  return tok;
}

using Ids = std::vector<int32_t>;

}  // namespace

TEST(WordPiece, LongestMatchFirstWithContinuationPieces) {
  EXPECT_EQ(tiny().encode_words("unaffable"), (Ids{5, 6, 7}));
  EXPECT_EQ(tiny().encode_words("wanted running"), (Ids{8, 9, 10, 13}));  // run ##ning, not run ##n ##ing
  EXPECT_EQ(tiny().encode_words("aaa"), (Ids{24, 25, 25}));
}

TEST(WordPiece, UnknownWordsBecomeOneUnk) {
  EXPECT_EQ(tiny().encode_words("xyz"), (Ids{1}));
  EXPECT_EQ(tiny().encode_words("wantx hello"), (Ids{1, 22}));  // a matched prefix does not survive
  EXPECT_EQ(tiny().encode_words(std::string(101, 'a')), (Ids{1}));
  EXPECT_EQ(tiny().encode_words(std::string(100, 'a')).size(), 100u);
}

TEST(WordPiece, NormalisesAndSplits) {
  EXPECT_EQ(tiny().encode_words("Hello,WORLD!"), (Ids{22, 14, 23, 16}));
  EXPECT_EQ(tiny().encode_words("CAFÉ Café"), (Ids{19, 19}));                  // accents stripped
  EXPECT_EQ(tiny().encode_words("hello中文world"), (Ids{22, 20, 21, 23}));      // CJK padded
  EXPECT_EQ(tiny().encode_words("hel\x01lo\x7f \t\u00a0world\u3000"), (Ids{22, 23}));  // controls removed
  EXPECT_EQ(tiny().encode_words("ß"), (Ids{29}));                              // lowercase keeps ß
  EXPECT_EQ(tiny().encode_words("do's"), (Ids{28, 26, 27}));
  EXPECT_EQ(tiny().encode_words(""), Ids{});
}

TEST(WordPiece, AddedTokensAreCutOutBeforeNormalisation) {
  EXPECT_EQ(tiny().encode_words("hello[SEP]world"), (Ids{22, 3, 23}));
  EXPECT_EQ(tiny().encode_words("[sep]"), (Ids{17, 1, 18}));  // special, normalized=false: case matters
  EXPECT_EQ(tiny().encode_words("a[CLS][MASK]a"), (Ids{24, 2, 4, 24}));
  EXPECT_EQ(tiny().encode_words("hello   [MASK]"), (Ids{22, 4}));  // lstrip takes the spaces
  // A normalized added token is matched in the normalised text: "MYTOKEN" lowercases to it.
  EXPECT_EQ(tiny().encode_words("a MYTOKEN a mytoken"), (Ids{24, 31, 24, 31}));
  EXPECT_TRUE(tiny().is_special(3));
  EXPECT_FALSE(tiny().is_special(31));
  EXPECT_FALSE(tiny().is_special(22));
}

TEST(WordPiece, TemplateAndTruncation) {
  EXPECT_EQ(tiny().encode("hello world"), (Ids{2, 22, 23, 3}));
  EXPECT_EQ(tiny().encode("hello world", false), (Ids{22, 23}));
  EXPECT_EQ(tiny().encode("hello world hello world", true, 4), (Ids{2, 22, 23, 3}));
  EXPECT_EQ(tiny().encode("hello world", true, 2), (Ids{2, 3}));
  EXPECT_EQ(tiny().encode("hello world", false, 1), (Ids{22}));
  EXPECT_THROW(tiny().encode("hello", true, 1), Error);
  EXPECT_EQ(tiny().default_max_tokens(), 128);
}

TEST(WordPiece, PairsTruncateLongestFirst) {
  Ids ids, types;
  tiny().encode_pair("hello world", "run", 0, ids, types);
  EXPECT_EQ(ids, (Ids{2, 22, 23, 3, 10, 3}));
  EXPECT_EQ(types, (Ids{0, 0, 0, 0, 1, 1}));
  // Room 3: the shorter (1) keeps its length, the longer takes the rest.
  tiny().encode_pair("hello world hello world hello", "run", 6, ids, types);
  EXPECT_EQ(ids, (Ids{2, 22, 23, 3, 10, 3}));
  // Both too long: halves, the odd token to the longer one (the second when they are equal).
  tiny().encode_pair("a a a a", "do do do do", 9, ids, types);
  EXPECT_EQ(ids, (Ids{2, 24, 24, 24, 3, 28, 28, 28, 3}));
  tiny().encode_pair("a a a a", "do do do do", 10, ids, types);
  EXPECT_EQ(ids, (Ids{2, 24, 24, 24, 3, 28, 28, 28, 28, 3}));
  tiny().encode_pair("a a a a a", "do do do do", 10, ids, types);
  EXPECT_EQ(ids, (Ids{2, 24, 24, 24, 24, 3, 28, 28, 28, 3}));
  EXPECT_EQ(types, (Ids{0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(WordPiece, Decode) {
  const Ids ids = {2, 5, 6, 7, 14, 22, 26, 27, 16, 1, 3};
  // The cleanup works on each token with its joining space: " ," glues, "' s" stays apart.
  EXPECT_EQ(tiny().decode(ids), "unaffable, hello ' s!");
  EXPECT_EQ(tiny().decode(ids, false), "[CLS] unaffable, hello ' s! [UNK] [SEP]");
  EXPECT_EQ(tiny().decode(Ids{6, 22, -1, 999}), "##aff hello");  // a first "##" piece is kept as it is
}

TEST(WordPiece, Accessors) {
  EXPECT_EQ(tiny().n_vocab(), 32);
  EXPECT_EQ(tiny().cls_id(), 2);
  EXPECT_EQ(tiny().sep_id(), 3);
  EXPECT_EQ(tiny().pad_id(), 0);
  EXPECT_EQ(tiny().unk_id(), 1);
  EXPECT_EQ(tiny().token_text(12), "##ing");
  EXPECT_EQ(tiny().find_token("##ing"), 12);
  EXPECT_EQ(tiny().find_token("MyToken"), 31);
  EXPECT_EQ(tiny().find_token("nope"), -1);
  EXPECT_THROW(tiny().token_text(32), Error);
}

TEST(WordPiece, UnsupportedFilesNameTheProblem) {
  try {
    load_json(tokenizer_json("BPE"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'BPE' model"), std::string::npos) << e.what();
  }
  std::string nfkc = tokenizer_json();
  nfkc.replace(nfkc.find("\"BertNormalizer\""), 16, "\"NFKC\"");
  EXPECT_THROW(load_json(nfkc), Error);
  EXPECT_THROW(WordPieceTokenizer::from_tokenizer_json(temp_path("missing.json")), Error);
}

TEST(WordPiece, VocabTxt) {
  std::string lines;
  for (const std::string& token : kVocab) lines += token + "\n";
  const TempFile file("vocab.txt", lines);
  const auto tok = WordPieceTokenizer::from_vocab_txt(file.path());
  EXPECT_EQ(tok.encode("Unaffable, CAFÉ[SEP]"), (Ids{2, 5, 6, 7, 14, 19, 3, 3}));
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_TRUE(tok.is_special(4));
  WordPieceConfig cased;
  cased.lowercase = cased.strip_accents = false;
  const auto cased_tok = WordPieceTokenizer::from_vocab_txt(file.path(), cased);
  EXPECT_EQ(cased_tok.encode_words("Hello hello"), (Ids{1, 22}));
}

TEST(WordPiece, GgufWithPhantomSpaces) {
  // As llama.cpp's converter writes it: "▁" before word-initial pieces, "##" dropped, controls kept.
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (size_t i = 0; i < kVocab.size(); ++i) {
    const std::string& t = kVocab[i];
    const bool control = i < 5;
    tokens.push_back(control ? t : t.starts_with("##") ? t.substr(2) : "\u2581" + t);
    types.push_back(control ? 3 : 1);
  }
  const std::string path = temp_path("bert.gguf");
  {
    gguf::GgufWriter w(path);
    w.add_string("general.architecture", "bert");
    w.add_string("tokenizer.ggml.model", "bert");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    w.add_u32("tokenizer.ggml.bos_token_id", 2);
    w.add_u32("tokenizer.ggml.seperator_token_id", 3);
    w.add_u32("tokenizer.ggml.padding_token_id", 0);
    w.add_u32("tokenizer.ggml.unknown_token_id", 1);
    w.write_header();
    w.finish();
  }
  const auto tok = WordPieceTokenizer::from_gguf(gguf::GgufFile::open(path));
  std::filesystem::remove(path);
  EXPECT_EQ(tok.token_text(12), "##ing");
  EXPECT_EQ(tok.token_text(22), "hello");
  EXPECT_EQ(tok.encode("Unaffable, hello[SEP]"), (Ids{2, 5, 6, 7, 14, 22, 3, 3}));
  EXPECT_EQ(tok.decode(tok.encode("wanted running")), "wanted running");
  EXPECT_EQ(tok.cls_id(), 2);
  EXPECT_TRUE(tok.is_special(0));
  EXPECT_FALSE(tok.is_special(22));
}

}  // namespace ridge
