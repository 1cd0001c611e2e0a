#pragma once
// What a request asks its output to be, as it arrives (a JSON schema, JSON mode, a regex, a choice
// of strings, a GBNF grammar), before compilation; and the one place that turns it into a Grammar.
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"

namespace ridge::grammar {

struct GrammarSpec {
  enum class Kind { kNone, kJsonObject, kJsonSchema, kRegex, kChoice, kGbnf };
  Kind kind = Kind::kNone;
  std::string source;                // schema (JSON text), regex or GBNF
  std::vector<std::string> choices;  // kChoice
  Whitespace whitespace = Whitespace::kCompact;

  bool empty() const { return kind == Kind::kNone; }
  std::string cache_key() const;     // equal specs, equal keys
  std::string describe() const;      // "json_schema", "regex", ... for logs and metrics labels
};

// Throws GrammarError naming what is wrong or unsupported.
Grammar build_grammar(const GrammarSpec& spec);

}  // namespace ridge::grammar
