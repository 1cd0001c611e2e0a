#pragma once
// JSON Schema (draft 2020-12) to grammar: the JSON texts that validate against the schema, in a
// whitespace policy (compact: none outside strings; flexible: any JSON whitespace where JSON allows
// it, bounded). A keyword that would constrain the instance but is not supported is a GrammarError
// naming it; annotations that cannot constrain generation ($comment, title, description, examples,
// contentMediaType, ...) are accepted and ignored.
#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace ridge::grammar {

enum class Whitespace { kCompact, kFlexible };

struct JsonSchemaOptions {
  Whitespace whitespace = Whitespace::kCompact;
  int max_whitespace = 20;  // flexible: at most this many whitespace bytes in a row
};

Grammar json_schema_grammar(const nlohmann::json& schema, const JsonSchemaOptions& options = {});

// Any JSON value whose top level is an object (OpenAI's response_format json_object).
Grammar json_object_grammar(const JsonSchemaOptions& options = {});

}  // namespace ridge::grammar
