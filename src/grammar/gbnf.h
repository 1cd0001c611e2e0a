#pragma once
// llama.cpp's GBNF grammars, so users can bring their .gbnf files: `name ::= alternatives`, "literals"
// and [classes] with \n \t \r \\ \" \[ \] \xXX \uXXXX \UXXXXXXXX escapes, [^...] negation, '.', groups,
// * + ? {m} {m,} {m,n}, # comments, rules continued on following lines inside parentheses or after |.
// The start rule is `root`. Errors (GrammarError) give the line and column.
#include <string_view>

#include "grammar/grammar.h"

namespace ridge::grammar {

Grammar parse_gbnf(std::string_view text);

}  // namespace ridge::grammar
