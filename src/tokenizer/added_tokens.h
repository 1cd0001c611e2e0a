#pragma once
// tokenizer.json's added_tokens, cut out of the text before the model sees it, as tokenizers'
// AddedVocabulary does: leftmost-longest matches, never overlapping; tokens with normalized=false
// are found in the raw text, the others in the normalised text of what lies between.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;      // skipped by decode(skip_special)
  bool normalized = false;   // matched after normalisation (against the normalised content)
  bool lstrip = false;       // the match takes the whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only matches with no word character on either side
};

struct TextSpan {
  int32_t token = -1;  // >= 0: an added token's id; -1: text to tokenize
  size_t begin = 0, end = 0;
};

class AddedTokenMatcher {
 public:
  // `pattern` is what is searched for: the content itself, or its normalised form.
  void add(const AddedToken& token, std::string pattern);

  bool has_normalized() const { return has_normalized_; }
  const std::vector<AddedToken>& tokens() const { return tokens_; }

  // `text` as consecutive spans covering it, cut at the matches of the tokens whose `normalized`
  // flag equals `normalized`.
  std::vector<TextSpan> split(std::string_view text, bool normalized) const;

 private:
  // Index of the longest pattern of the wanted kind starting at text[pos], or -1.
  int longest_at(std::string_view text, size_t pos, bool normalized) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> patterns_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  // token indices, longest pattern first
  bool has_normalized_ = false;
};

}  // namespace ridge
