#pragma once
// Whole-text recognition against a grammar: the byte matcher run over a string. For tests, the
// JSON-Schema-Test-Suite harness (`ridge grammar`) and validation of forced output.
#include <string_view>

#include "grammar/grammar.h"

namespace ridge::grammar {

// True when `text` is a sentence of `grammar`. Throws GrammarError for a grammar the matcher
// refuses (left recursion).
bool grammar_accepts(const Grammar& grammar, std::string_view text);

}  // namespace ridge::grammar
