#pragma once
// Regular expressions (the ECMAScript subset JSON Schema's `pattern` uses) compiled into grammar
// rules: literals and escapes (\d \w \s \D \W \S \b-free), classes with ranges and negation, '.',
// groups (capturing, (?:...)), alternation, ? * + {m} {m,} {m,n} (lazy forms match the same set),
// ^ and $ at the ends. Backreferences, lookaround and word boundaries are GrammarErrors naming them.
#include <string_view>

#include "grammar/builder.h"

namespace ridge::grammar {

enum class RegexTarget {
  kRaw,                // the pattern matches the output bytes themselves (guided_regex)
  kJsonStringContent,  // the pattern matches a string value; the rule matches its JSON encoding
                       // between the quotes (each character by GrammarBuilder::json_char_class)
};

struct RegexOptions {
  RegexTarget target = RegexTarget::kRaw;
  // JSON Schema's semantics: the pattern may match anywhere in the string, so an end without ^ or $
  // matches any characters there. false: the whole text must match (guided_regex).
  bool search = false;
};

// A rule matching the strings the pattern describes. Throws GrammarError.
RuleId add_regex_rule(GrammarBuilder& builder, std::string_view pattern, const RegexOptions& options);

// A grammar whose sentences are the whole-text matches of `pattern` (RegexTarget::kRaw, anchored).
Grammar regex_grammar(std::string_view pattern);

}  // namespace ridge::grammar
