#pragma once
// How the byte positions at the top of stacks over one parent read plain characters (plain_tokens.h),
// found from the grammar alone: a frame of a character class (its alternatives byte sets, then
// End) either rejects every character with a given first byte, or ends exactly at each one's last
// byte (so every such character leads to the parent's closure), or neither (kMixed: then only
// stepping the parser tells, see plain_runs.h). The answer depends on
// the positions only, not on the stack below, so one analysis serves every count of a counted
// string.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/flat_grammar.h"

namespace ridge::grammar {

class PlainFrames {
 public:
  enum Fate : uint8_t { kRejected, kEnds, kMixed };

  explicit PlainFrames(const FlatGrammar& grammar) : grammar_(grammar) {}

  // By first byte of a plain character: its fate read from the byte positions `positions`.
  const std::array<Fate, 256>& fates(const std::vector<int32_t>& positions);

 private:
  // The positions reached inside a character, plain_text's automaton at `text_state`: kEnds when
  // every way of finishing it ends them all at its last byte.
  Fate finish(const std::vector<int32_t>& reached, int text_state) const;

  const FlatGrammar& grammar_;
  std::unordered_map<std::string, std::array<Fate, 256>> fates_;
};

}  // namespace ridge::grammar
