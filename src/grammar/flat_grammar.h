#pragma once
// A Grammar laid out for the matcher: every alternative's symbols in one array of elements, each
// alternative closed by an End element, so a parser position is one integer. Byte sets deduplicated.
// Building it refuses left recursion (the pushdown matcher would expand it forever); recursion whose
// every left-edge call is a tail call is fine (the matcher reuses the caller's frame).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace ridge::grammar {

struct FlatGrammar {
  enum class Kind : uint8_t { kBytes, kRule, kEnd };
  struct Elem {
    Kind kind;
    int32_t arg;   // kBytes: index into sets; kRule: the rule called
    int32_t rule;  // the rule this element belongs to
  };
  std::vector<Elem> elems;
  std::vector<ByteSet> sets;
  std::vector<std::vector<int32_t>> alt_starts;  // by rule: the position of each alternative's first element
  std::vector<std::string> rule_names;
  // By rule: the rule is lexical -- no recursion through a non-tail call in or below it -- so a
  // token mask is precomputed for a stack of such frames together (inside a string literal, its
  // characters, the string and the loop over them), not for each frame alone.
  std::vector<uint8_t> lexical;
  std::vector<int32_t> min_bytes;  // by rule: the fewest bytes a sentence of it has
  std::vector<int32_t> rest_min_bytes;  // by position: the fewest bytes from it to its alternative's end
  RuleId root = -1;

  static FlatGrammar from(const Grammar& grammar);  // throws GrammarError
  int32_t n_positions() const { return static_cast<int32_t>(elems.size()); }
  bool lexical_at(int32_t pos) const { return lexical[elems[pos].rule] != 0; }
  // Bytes read by the same byte elements among `positions` share a class: classes[b] numbers b's
  // class, 0 when none reads b. Returns the number of classes, 0 included.
  int byte_classes(const std::vector<int32_t>& positions, std::array<uint16_t, 256>& classes) const;
};

}  // namespace ridge::grammar
