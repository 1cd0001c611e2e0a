#pragma once
// JSON Schema (draft 2020-12) to grammar: the JSON texts that validate against the schema, in a
// whitespace policy (compact: none outside strings; flexible: any JSON whitespace where JSON allows
// it, bounded). A keyword that would constrain the instance but is not supported is a GrammarError
// naming it; annotations that cannot constrain generation ($comment, title, description, examples,
// contentMediaType, ...) are accepted and ignored.
#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace ridge::grammar {

// compact: no whitespace outside strings; flexible: any JSON whitespace where JSON allows it;
// spaced: one space after ',' and ':' and none elsewhere, as Python's json.dumps writes JSON (the
// spelling chat templates render tool-call arguments in, so the model's own).
enum class Whitespace { kCompact, kFlexible, kSpaced };

struct JsonSchemaOptions {
  Whitespace whitespace = Whitespace::kCompact;
  int max_whitespace = 20;  // flexible: at most this many whitespace bytes in a row
  // `format` constrains strings (date-time, date, time, email, uuid, uri, ipv4, hostname,
  // json-pointer; other formats stay annotations). false: every format is an annotation, as JSON
  // Schema 2020-12 says by default.
  bool assert_format = true;
  // false (generation): one spelling per value -- a string's characters raw or by their short
  // escape (\uXXXX only for other controls), numbers without -0 or trailing fraction zeros (5, not
  // 5.0); true (validation): every JSON spelling (\u0061 for 'a', \/ for '/', 5.0 for 5).
  bool all_escapes = false;
};

// Throws GrammarError ("json schema: ...") for an unsupported keyword (naming it), a remote $ref, an
// unsatisfiable schema ("unsatisfiable") or one too large to compile. Objects' named members are
// emitted in the order their names first appear in the schema: pass an ordered_json (parse the
// schema with nlohmann::ordered_json::parse) to keep the document's order; a plain json has sorted keys.
Grammar json_schema_grammar(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {});
Grammar json_schema_grammar(const nlohmann::json& schema, const JsonSchemaOptions& options = {});

// Any JSON value whose top level is an object (OpenAI's response_format json_object).
Grammar json_object_grammar(const JsonSchemaOptions& options = {});

}  // namespace ridge::grammar
