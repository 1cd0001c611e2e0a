#pragma once
// What a request asks its output to be, as it arrives (a JSON schema, JSON mode, a regex, a choice
// of strings, a GBNF grammar), before compilation; and the one place that turns it into a Grammar.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"

namespace ridge::grammar {

// One tagged value of a kTagged spec: `begin`, a JSON value of `schema` (JSON text), `end`.
struct GrammarTag {
  std::string begin;
  std::string schema;
  std::string end;
};

struct GrammarSpec {
  enum class Kind { kNone, kJsonObject, kJsonSchema, kRegex, kChoice, kGbnf, kTagged };
  Kind kind = Kind::kNone;
  std::string source;                // schema (JSON text), regex or GBNF
  std::vector<std::string> choices;  // kChoice
  Whitespace whitespace = Whitespace::kCompact;
  // kTagged (tool calls): `prefix`, then one of `tags` -- or, with `repeat`, one or more separated
  // by `separator` -- then `suffix`.
  std::vector<GrammarTag> tags;
  std::string prefix, separator, suffix;
  bool repeat = false;

  bool empty() const { return kind == Kind::kNone; }
  std::string cache_key() const;     // equal specs, equal keys
  std::string describe() const;      // "json_schema", "regex", ... for logs and metrics labels
};

// "compact", "flexible", "spaced"; nullopt for another name.
std::optional<Whitespace> whitespace_from_name(std::string_view name);

// Throws GrammarError naming what is wrong or unsupported.
Grammar build_grammar(const GrammarSpec& spec);

}  // namespace ridge::grammar
