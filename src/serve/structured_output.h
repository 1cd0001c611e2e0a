#pragma once
// The request fields that constrain the output, under every name clients use: OpenAI's
// response_format (json_object, json_schema), vLLM's guided_json / guided_regex / guided_choice /
// guided_grammar and structured_outputs {json, regex, choice, grammar, json_object}, llama.cpp's
// json_schema and grammar (GBNF). At most one may be given. "whitespace": "flexible" (a ridge
// extension) lets JSON carry whitespace between tokens; the default is compact.
#include <nlohmann/json.hpp>

#include "grammar/grammar_spec.h"

namespace ridge {

// Throws ApiError (400) naming the field. The body parsed keeping key order (schemas' members are
// generated in their order).
grammar::GrammarSpec read_structured_output(const nlohmann::ordered_json& body);

}  // namespace ridge
