// Added-token matching with tokenizers' lstrip / rstrip / single_word rules.
#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "tokenizer/unicode_data.h"
#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"

namespace ridge {

namespace {

// The regex \w of Rust's regex crate, closely enough: letters, marks, digits and '_'.
bool is_word_char(uint32_t cpt) {
  return cpt == '_' || (unicode::codepoint_flags(cpt) & (unicode::kLetter | unicode::kMark | unicode::kNumber));
}

// Start of the code point that ends text[0, end).
size_t previous_start(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

bool ends_with_word(std::string_view text, size_t end) {
  if (end == 0) return false;
  size_t start = previous_start(text, end);
  return is_word_char(utf8::decode_lenient(text, start));
}

bool starts_with_word(std::string_view text, size_t begin) {
  return begin < text.size() && is_word_char(utf8::decode_lenient(text, begin));
}

// Where the whitespace run ending at `end` begins.
size_t whitespace_before(std::string_view text, size_t end) {
  while (end > 0) {
    const size_t start = previous_start(text, end);
    size_t at = start;
    if (!unicode::is_bert_whitespace(utf8::decode_lenient(text, at))) break;
    end = start;
  }
  return end;
}

// Where the whitespace run starting at `begin` ends.
size_t whitespace_after(std::string_view text, size_t begin) {
  while (begin < text.size()) {
    size_t next = begin;
    if (!unicode::is_bert_whitespace(utf8::decode_lenient(text, next))) break;
    begin = next;
  }
  return begin;
}

}  // namespace

void AddedTokenMatcher::add(const AddedToken& token, std::string pattern) {
  if (pattern.empty()) return;  // tokenizers ignores empty contents
  const auto index = static_cast<uint32_t>(tokens_.size());
  tokens_.push_back(token);
  patterns_.push_back(std::move(pattern));
  has_normalized_ = has_normalized_ || token.normalized;
  auto& bucket = by_first_byte_[static_cast<uint8_t>(patterns_.back()[0])];
  // Longest first; a pattern goes after those of its length already there (a sort per add is
  // quadratic for the thousands of added tokens some vocabularies carry).
  const auto longer = [&](uint32_t a, uint32_t b) { return patterns_[a].size() > patterns_[b].size(); };
  bucket.insert(std::upper_bound(bucket.begin(), bucket.end(), index, longer), index);
}

int AddedTokenMatcher::longest_at(std::string_view text, size_t pos, bool normalized) const {
  for (uint32_t index : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
    if (tokens_[index].normalized == normalized && text.substr(pos).starts_with(patterns_[index]))
      return static_cast<int>(index);
  }
  return -1;
}

std::vector<TextSpan> AddedTokenMatcher::split(std::string_view text, bool normalized) const {
  std::vector<TextSpan> spans;
  size_t done = 0;  // text before this is in `spans`
  size_t pos = 0;
  while (pos < text.size()) {
    const int index = longest_at(text, pos, normalized);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t begin = pos, end = pos + patterns_[index].size();
    pos = end;  // a discarded match is skipped whole, as the Aho-Corasick iteration does
    if (token.single_word && (ends_with_word(text, begin) || starts_with_word(text, end))) continue;
    if (token.lstrip) begin = std::max(whitespace_before(text, begin), done);
    if (token.rstrip) end = pos = whitespace_after(text, end);
    if (done < begin) spans.push_back({-1, done, begin});
    spans.push_back({token.id, begin, end});
    done = end;
  }
  if (done < text.size()) spans.push_back({-1, done, text.size()});
  return spans;
}

}  // namespace ridge
