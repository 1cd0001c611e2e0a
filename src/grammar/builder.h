#pragma once
// Building a Grammar by parts, shared by every front end (JSON Schema, regex, GBNF, choices):
// literals, code point classes spelled out as UTF-8 byte sequences, repetition unrolled into
// right-recursive rules (the matcher refuses left recursion), and the JSON string encodings of a
// character class (a '"' in a class becomes \" in the output, controls become escapes).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace ridge::grammar {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// A set of Unicode scalar values as sorted, disjoint, non-adjacent closed ranges.
class CodepointSet {
 public:
  CodepointSet() = default;
  static CodepointSet range(uint32_t lo, uint32_t hi);
  static CodepointSet any();  // every scalar value (surrogates excluded)

  void add(uint32_t cp) { add_range(cp, cp); }
  void add_range(uint32_t lo, uint32_t hi);
  void add(const CodepointSet& other);
  CodepointSet complement() const;  // within any()
  CodepointSet intersect(const CodepointSet& other) const;
  bool contains(uint32_t cp) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }

 private:
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

class GrammarBuilder {
 public:
  // A new, empty rule. The name is made unique by a numeric suffix when taken.
  RuleId add_rule(std::string_view name_hint);
  void add_alternative(RuleId rule, Sequence alternative);
  void set_alternatives(RuleId rule, std::vector<Sequence> alternatives);
  int32_t n_rules() const { return static_cast<int32_t>(grammar_.rules.size()); }
  const Rule& rule(RuleId id) const { return grammar_.rules.at(id); }
  // Rules by name, for front ends with named rules (GBNF): created empty on first mention.
  RuleId named_rule(std::string_view name);
  bool has_named_rule(std::string_view name) const;

  // The bytes of `text`, one symbol each.
  static Sequence literal(std::string_view text);
  static void append(Sequence& to, const Sequence& from) { to.insert(to.end(), from.begin(), from.end()); }

  // One code point of `set`, as UTF-8. Error when the set is empty.
  Symbol utf8_class(const CodepointSet& set);
  // One character of `set` as it may appear inside a JSON string literal (between the quotes): raw
  // UTF-8 for printable characters other than '"' and '\\', \" \\ \/ for those, \b \f \n \r \t or
  // \u00XX (either hex case) for controls.
  Symbol json_char_class(const CodepointSet& set);

  // A rule with these alternatives; returns a reference to it.
  Symbol choice(std::vector<Sequence> alternatives, std::string_view name_hint);
  // `item` repeated min..max times (max < 0: unbounded), as right-recursive rules.
  Symbol repeat(const Sequence& item, int64_t min, int64_t max, std::string_view name_hint);
  Symbol optional(const Sequence& item, std::string_view name_hint) { return repeat(item, 0, 1, name_hint); }

  // A finished grammar's rules copied in (names prefixed by `prefix`); returns its root here. Lets
  // front ends compose: text around a JSON schema's values (tool calls).
  RuleId embed(const Grammar& grammar, std::string_view prefix);

  // Checks every referenced rule exists and has alternatives, drops rules that can derive no string
  // (error when the root is one: "unsatisfiable"), and hands the grammar over.
  Grammar finish(RuleId root);

 private:
  Grammar grammar_;
  std::unordered_map<std::string, RuleId> by_name_;
  std::unordered_map<std::string, int> name_uses_;
  std::unordered_map<std::string, RuleId> class_rules_;  // one rule per distinct character class
};

}  // namespace ridge::grammar
