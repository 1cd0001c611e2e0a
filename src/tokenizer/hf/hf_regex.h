#pragma once
// A small backtracking regex engine for the Split patterns of tokenizer.json files that ridge has
// no hand-written splitter for (DeepSeek V3's, for one). It covers the subset those patterns use,
// with Oniguruma's leftmost-first semantics: literals and escapes, classes with ranges and
// \p{L} \p{N} \p{M} \p{P} \p{S} \p{Z} \p{C} (and \P), \s \d \w, groups (?: ) and (?i: ), alternation,
// greedy / lazy / possessive quantifiers and lookahead (?= ) (?! ). Anything else (lookbehind,
// anchors, backreferences, other properties) is an Error at load naming the pattern.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ridge::hf {

struct RegexNode;

class Regex {
 public:
  static Regex compile(std::string_view pattern);

  // The non-overlapping, non-empty matches in `cpts`, left to right: [begin, end) indices.
  std::vector<std::pair<size_t, size_t>> find_all(const std::vector<uint32_t>& cpts) const;

 private:
  std::shared_ptr<const RegexNode> root_;
  std::string pattern_;
};

// Rust regex's and Oniguruma's \w: letters, marks, decimal and letter numbers, connector
// punctuation and the joiners U+200C / U+200D.
bool is_regex_word_char(uint32_t cpt);

}  // namespace ridge::hf
