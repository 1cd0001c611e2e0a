#pragma once
// A tokenizer.json (Hugging Face tokenizers' format) as plain data: the normalizer, pre-tokenizer,
// model, post-processor and decoder it names, each a list of steps. hf_json_*.cc read them,
// hf_*.cc run them exactly as tokenizers 0.22 does, so ids agree token for token.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bert_normalizer.h"
#include "tokenizer/hf/hf_regex.h"

namespace ridge::hf {

// How a Split keeps what its pattern matched (tokenizers' SplitDelimiterBehavior).
enum class Behavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };

// ---- normalizers: one string in, one string out ----
struct NormalizerStep {
  enum Kind { kCodepoints, kNfc, kNfkc, kNfkd, kReplace, kPrepend, kStrip, kByteLevel } kind = kCodepoints;
  TextNormalizer codepoints{};  // kCodepoints: NFD / Lowercase / StripAccents / BertNormalizer steps
  std::string from{}, to{};   // kReplace: literal from -> to; kPrepend: `to`
  bool left = false, right = false;  // kStrip
};

// ---- pre-tokenizers: each piece of text into smaller pieces ----
enum class SplitPattern {
  kLiteral,      // Split with a string pattern
  kGpt2,         // ByteLevel's regex and the same Split regex
  kLlama3,       // Llama 3's Split regex (digits in runs of up to three)
  kQwen2,        // the same with single digits (Qwen2, DeepSeek-R1-Qwen)
  kWhitespace,   // isolated whitespace characters (WhitespaceSplit, BertPreTokenizer)
  kPunctuation,  // isolated punctuation characters
  kDigit,        // isolated \p{N} characters
  kWordsOrSymbols,  // \w+|[^\w\s]+ (the Whitespace pre-tokenizer)
  kChar,         // one literal character per match (CharDelimiterSplit)
  kRegex,        // any other Split regex, through hf::Regex
};

struct PreTokenizerStep {
  enum Kind { kSplit, kByteLevel, kMetaspace } kind = kSplit;
  SplitPattern pattern = SplitPattern::kLiteral;
  std::string literal{};  // kLiteral / kChar
  std::shared_ptr<const Regex> regex{};  // kRegex
  Behavior behavior = Behavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false, use_regex = true;  // kByteLevel
  std::string replacement = "\xE2\x96\x81";         // kMetaspace ("▁")
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  bool split = true;  // kMetaspace splits before each replacement
};

// ---- models ----
enum class ModelType { kBpe, kUnigram, kWordPiece };

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIds = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct Model {
  ModelType type = ModelType::kBpe;
  std::vector<std::string> token_of;  // by id ("" for an id the vocabulary skips)
  TokenIds id_of;
  size_t longest_token = 0;  // bytes
  // BPE
  std::unordered_map<uint64_t, std::pair<uint32_t, int32_t>> merges;  // (left, right) -> (rank, merged id)
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
  std::string continuing_prefix, end_of_word_suffix;
  int32_t unk = -1;
  // Unigram
  std::vector<double> score;  // by id
  double min_score = 0.0;
  // WordPiece
  size_t max_input_chars_per_word = 100;

  int32_t find(std::string_view text) const {
    auto it = id_of.find(text);
    return it == id_of.end() ? -1 : it->second;
  }
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
  }
  // The ids of one pre-tokenized word, appended to `out`.
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

 private:
  void tokenize_bpe(std::string_view word, std::vector<int32_t>& out) const;
  void tokenize_unigram(std::string_view word, std::vector<int32_t>& out) const;
  void tokenize_wordpiece(std::string_view word, std::vector<int32_t>& out) const;
};

// ---- post-processor: what encode(add_special_tokens=True) puts around the text ----
struct PostProcessor {
  std::vector<int32_t> before, after;  // ids around the single sequence
};

// ---- decoders: token strings to text ----
struct DecoderStep {
  enum Kind { kByteLevel, kMetaspace, kByteFallback, kFuse, kStrip, kReplace, kWordPiece } kind = kFuse;
  std::string from{}, to{};  // kReplace; kMetaspace: `from` is the replacement
  bool prepend = true;   // kMetaspace: its prepend_scheme is not "never"
  std::string content{};   // kStrip: the character stripped
  size_t start = 0, stop = 0;
  std::string prefix = "##";  // kWordPiece
  bool cleanup = true;
};

struct Pipeline {
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  Model model;
  PostProcessor post;
  bool has_decoder = false;  // without one, tokens are joined with ' '
  std::vector<DecoderStep> decoder;
  AddedTokenMatcher added_all;      // every added token
  AddedTokenMatcher added_nonspecial;  // the ones recognised when special-token text is plain text
  std::vector<std::string> added_content;  // by id: added-token text (empty when not an added token)

  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  // One token's bytes as a streaming decoder shows them: the decoder chain run on it alone, as if
  // it followed other tokens (no first-token space stripping), byte tokens as raw bytes.
  std::string piece(int32_t id) const;
  const std::string& token_text(int32_t id) const;  // as the vocabulary or added_tokens spells it
  int32_t n_tokens() const { return int32_t(std::max(model.token_of.size(), added_content.size())); }
};

// Steps of a pipeline, run alone (exposed for tests).
std::string normalize(const std::vector<NormalizerStep>& steps, std::string_view text);
struct Piece {
  std::string text;
  bool at_start = false;  // begins at offset 0 of the input (Metaspace's prepend_scheme "first")
};
std::vector<Piece> pre_tokenize(const std::vector<PreTokenizerStep>& steps, std::vector<Piece> pieces);
// stream: decode one token as a continuation (no first-token rules; unfinished UTF-8 kept).
std::vector<std::string> decode_chain(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens,
                                      bool stream = false);

// NFC / NFKC / NFKD of UTF-8 text (invalid bytes read as U+FFFD).
std::string to_nfc(std::string_view text);
std::string to_nfkc(std::string_view text);
std::string to_nfkd(std::string_view text);

// Reading tokenizer.json: Error naming the file and any unsupported or malformed part.
Pipeline load_pipeline(const std::string& tokenizer_json_path);
// The same from the file's text; `name` is what errors call it.
Pipeline parse_pipeline(std::string_view tokenizer_json, const std::string& name);

}  // namespace ridge::hf
