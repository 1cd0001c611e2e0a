#pragma once
// The grammar every input compiles to (JSON Schema, regex, GBNF, a choice of strings): a context-free
// grammar over bytes. A rule is a list of alternatives; an alternative is a sequence of symbols; a
// symbol is a set of bytes (one byte of input) or a reference to a rule. UTF-8 is spelled out as byte
// sequences by the builder, so the matcher never decodes characters. Knows nothing of tokens.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ridge::grammar {

// A bad or unsupported grammar/schema/pattern. The message names the feature or the position; the
// server answers it with a 400.
class GrammarError : public std::runtime_error {
 public:
  explicit GrammarError(const std::string& what) : std::runtime_error(what) {}
};

struct ByteSet {
  std::array<uint64_t, 4> words{};

  static ByteSet of(uint8_t b) {
    ByteSet s;
    s.add(b);
    return s;
  }
  static ByteSet range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.add_range(lo, hi);
    return s;
  }
  void add(uint8_t b) { words[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool has(uint8_t b) const { return (words[b >> 6] >> (b & 63)) & 1; }
  bool empty() const { return (words[0] | words[1] | words[2] | words[3]) == 0; }
  int count() const {
    return __builtin_popcountll(words[0]) + __builtin_popcountll(words[1]) + __builtin_popcountll(words[2]) +
           __builtin_popcountll(words[3]);
  }
  ByteSet& operator|=(const ByteSet& o) {
    for (int i = 0; i < 4; ++i) words[i] |= o.words[i];
    return *this;
  }
  bool operator==(const ByteSet& o) const = default;
};

using RuleId = int32_t;

struct Symbol {
  enum class Kind : uint8_t { kBytes, kRule };
  Kind kind = Kind::kBytes;
  ByteSet bytes;     // kBytes: the byte this symbol consumes
  RuleId rule = -1;  // kRule

  static Symbol of_bytes(const ByteSet& set) { return Symbol{Kind::kBytes, set, -1}; }
  static Symbol of_byte(uint8_t b) { return of_bytes(ByteSet::of(b)); }
  static Symbol of_rule(RuleId r) { return Symbol{Kind::kRule, {}, r}; }
};

using Sequence = std::vector<Symbol>;  // empty: matches the empty string

struct Rule {
  std::string name;
  std::vector<Sequence> alternatives;  // none: matches nothing
};

struct Grammar {
  std::vector<Rule> rules;
  RuleId root = -1;

  // Text in GBNF-like notation, for error messages, tests and `ridge grammar --print`.
  std::string to_string() const;
};

}  // namespace ridge::grammar
