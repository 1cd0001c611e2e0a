#pragma once
// The text normalisation of WordPiece tokenizers as a list of steps over code points: what
// tokenizers' BertNormalizer does, and the NFD / Lowercase / StripAccents normalizers a
// tokenizer.json may chain in a Sequence instead.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

enum class NormalizeStep : uint8_t {
  kCleanText,        // drop NUL, U+FFFD and control characters; whitespace becomes ' '
  kPadCjk,           // ' ' on both sides of each CJK ideograph
  kNfd,              // canonical decomposition
  kStripNonspacing,  // drop Mn (BertNormalizer's strip_accents, after kNfd)
  kStripCombining,   // drop every mark (the StripAccents normalizer)
  kLowercase,        // Rust's char::to_lowercase, one character at a time
};

struct TextNormalizer {
  std::vector<NormalizeStep> steps;

  // BertNormalizer's steps, in its order.
  static TextNormalizer bert(bool clean_text, bool pad_cjk, bool strip_accents, bool lowercase);

  void apply(std::vector<uint32_t>& cpts) const;
  // Text (invalid UTF-8 reads as U+FFFD) to normalised UTF-8.
  std::string normalize(std::string_view text) const;
};

// The pre-tokenizer: words between whitespace, each punctuation character a word of its own
// (BertPreTokenizer has both; WhitespaceSplit only the first).
struct WordSplitter {
  bool split_whitespace = true;
  bool isolate_punctuation = true;

  std::vector<std::string> split(std::string_view normalized) const;
};

}  // namespace ridge
