#pragma once
// WordPiece (BERT) tokenization as Hugging Face tokenizers 0.22 does it, token for token: added
// (special) tokens cut out of the raw text, BertNormalizer (clean, CJK padding, NFD + accent strip,
// lowercase), BertPreTokenizer (whitespace, isolated punctuation), greedy longest-match-first pieces
// with a "##" prefix after the first, the post-processor's [CLS]/[SEP] and type ids, truncation,
// and the WordPiece decoder. Loaded from tokenizer.json, vocab.txt or a llama.cpp "bert" GGUF.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bert_normalizer.h"

namespace ridge {

namespace gguf {
class GgufFile;
}

// One item of a post-processor template: a special token's id, or where a sequence goes.
struct TemplateItem {
  static constexpr int32_t kSequenceA = -1, kSequenceB = -2;
  int32_t id;
  int32_t type_id;
};

struct WordPieceConfig {
  bool clean_text = true;  // BertNormalizer
  bool handle_chinese_chars = true;
  bool strip_accents = true;  // tokenizer.json: null means "same as lowercase"
  bool lowercase = true;
  std::string unk_token = "[UNK]";
  std::string continuing_prefix = "##";
  int max_input_chars_per_word = 100;
};

class WordPieceTokenizer {
 public:
  // tokenizer.json with a WordPiece model; its normalizer (BertNormalizer, or a Sequence of NFD /
  // Lowercase / StripAccents / BertNormalizer), pre_tokenizer (BertPreTokenizer, WhitespaceSplit,
  // Punctuation or a Sequence of them), added_tokens, post_processor (TemplateProcessing or
  // BertProcessing) and decoder (WordPiece). Error naming anything else.
  static WordPieceTokenizer from_tokenizer_json(const std::string& path);
  // vocab.txt (one token per line, id = line number) with the given config; CLS/SEP/PAD/UNK/MASK by
  // their usual names, special when present.
  static WordPieceTokenizer from_vocab_txt(const std::string& path, const WordPieceConfig& config = {});
  // A GGUF whose tokenizer.ggml.model is "bert", as llama.cpp's convert_hf_to_gguf.py writes it:
  // word-initial pieces carry a leading U+2581, continuation pieces have lost their "##", [X] tokens
  // are kept as they are; tokenizer.ggml.{cls (else bos),seperator,padding,unknown}_token_id, and
  // tokenizer.ggml.normalizer.{lowercase,strip_accents} (default: uncased, as llama.cpp).
  static WordPieceTokenizer from_gguf(const gguf::GgufFile& file);

  // The pieces' ids of `text` with no special tokens added.
  std::vector<int32_t> encode_words(std::string_view text) const;
  // [CLS] text [SEP] when add_special; the text's pieces truncated from the end so the whole is at
  // most max_tokens long (0: no limit). Error when max_tokens is below the number of special tokens.
  std::vector<int32_t> encode(std::string_view text, bool add_special = true, int64_t max_tokens = 0) const;
  // A pair for cross-encoders: [CLS] a [SEP] b [SEP]; type_ids 0 for [CLS] a [SEP], 1 for b [SEP].
  // Truncated to max_tokens (0: no limit) as tokenizers' "longest_first" strategy does; Error as encode.
  void encode_pair(std::string_view a, std::string_view b, int64_t max_tokens, std::vector<int32_t>& ids,
                   std::vector<int32_t>& type_ids) const;
  // Pieces joined as tokenizers' WordPiece decoder does ("##" glued, spaces between words, specials
  // skipped when skip_special; ids outside the vocabulary are skipped).
  std::string decode(std::span<const int32_t> ids, bool skip_special = true) const;

  int32_t n_vocab() const { return static_cast<int32_t>(text_.size()); }
  int32_t cls_id() const { return cls_; }
  int32_t sep_id() const { return sep_; }
  int32_t pad_id() const { return pad_; }
  int32_t unk_id() const { return unk_; }
  const std::string& token_text(int32_t id) const;  // as in tokenizer.json ("##ing"); Error if out of range
  int32_t find_token(std::string_view text) const;  // -1 if absent
  bool is_special(int32_t id) const;
  // tokenizer.json's truncation.max_length (0 when it sets none): the length the model was tuned at.
  int64_t default_max_tokens() const { return default_max_tokens_; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

  // The model's tokens by id (a gap is an empty string); then added tokens on top of them.
  void set_vocab(std::vector<std::string> tokens);
  void add_token(const AddedToken& token);
  void set_bert_template(int32_t cls, int32_t sep);
  int64_t special_count(bool pair) const;
  void word_pieces(std::string_view word, std::vector<int32_t>& out) const;
  void text_pieces(std::string_view text, std::vector<int32_t>& out) const;
  std::vector<int32_t> apply_template(const std::vector<TemplateItem>& items, const std::vector<int32_t>& a,
                                      const std::vector<int32_t>& b, std::vector<int32_t>* type_ids) const;

  std::vector<std::string> text_;  // by id
  TokenMap model_ids_;             // the model's vocabulary
  TokenMap added_ids_;             // added tokens (looked up first, as tokenizers does)
  std::vector<uint8_t> special_;   // by id
  size_t longest_piece_ = 0;       // bytes, "##" included

  TextNormalizer normalizer_;
  WordSplitter splitter_;
  AddedTokenMatcher added_;
  std::string unk_token_ = "[UNK]";
  std::string prefix_ = "##";
  int max_chars_ = 100;
  std::vector<TemplateItem> single_{{TemplateItem::kSequenceA, 0}};
  std::vector<TemplateItem> pair_{{TemplateItem::kSequenceA, 0}, {TemplateItem::kSequenceB, 1}};
  bool decoder_wordpiece_ = true;  // false: tokens joined with ' ' (no decoder in tokenizer.json)
  std::string decoder_prefix_ = "##";
  bool decoder_cleanup_ = true;

  int32_t cls_ = -1, sep_ = -1, pad_ = -1, unk_ = -1;
  int64_t default_max_tokens_ = 0;
};

}  // namespace ridge
