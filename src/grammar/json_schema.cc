// JSON Schema to grammar: the entry points and the choices that shape the language.
//
// Exactness. The grammar accepts a text only if it is JSON whose value validates, and accepts every
// valid value in these spellings:
//   - numbers without an exponent (every number has one such spelling); a schema that puts no
//     constraint on numbers takes exponents too. Integers may carry a zero fraction ("1.0" is an
//     integer for JSON Schema);
//   - strings with every character in any JSON spelling (raw, short escape, \uXXXX, surrogate pairs);
//   - objects whose named members (those the schema names in properties, required, const, ...) come
//     in the order the names first appear in the schema document; other members anywhere among them;
//   - whitespace per the policy, never before or after the top-level value.
// Duplicate keys are not excluded (no context-free grammar can), as in every JSON grammar.
//
// `format` constrains strings when options.assert_format is set (the default: generation wants
// well-formed dates and UUIDs); JSON Schema 2020-12 makes it an annotation, which assert_format =
// false gives.
#include "grammar/json_schema.h"

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar {

namespace jsonschema {

namespace {

// Names objects carry, by first appearance in a document-order walk: property names, required
// names, dependentRequired / dependentSchemas keys and dependents, keys of objects in const / enum.
// tests/conformance/test_json_schema_suite.py orders instance members by the same walk.
void rank_names(const Json& node, int mode, std::unordered_map<std::string, size_t>& rank) {
  enum { kSchema, kNames, kValue };
  const auto record = [&](const std::string& name) { rank.emplace(name, rank.size()); };
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (mode == kValue) {
        record(key);
        rank_names(value, kValue, rank);
      } else if (mode == kNames) {
        record(key);
        if (value.is_array())
          for (const auto& s : value)
            if (s.is_string()) record(s.get<std::string>());
        rank_names(value, kSchema, rank);
      } else if (key == "properties" || key == "dependentRequired" || key == "dependentSchemas" ||
                 key == "dependencies") {
        rank_names(value, kNames, rank);
      } else if (key == "required" && value.is_array()) {
        for (const auto& s : value)
          if (s.is_string()) record(s.get<std::string>());
      } else if (key == "const" || key == "enum") {
        rank_names(value, kValue, rank);
      } else {
        rank_names(value, kSchema, rank);
      }
    }
  } else if (node.is_array()) {
    for (const auto& item : node) rank_names(item, mode == kValue ? kValue : kSchema, rank);
  }
}

}  // namespace

Compiler::Compiler(const Json& root, const JsonSchemaOptions& options) : root_(root), options_(options), index_(root) {
  exprs_.resize(2);  // kAny, kNever
  normal_.push_back(std::make_unique<TypedSet>(TypedSet::any()));
  normal_.push_back(std::make_unique<TypedSet>());
  in_progress_.assign(2, 0);
  exprs_[kAny].where = "value";
  exprs_[kNever].where = "never";
  rank_names(root, 0, rank_);
}

Grammar Compiler::compile() {
  const ExprId root = schema_expr(root_, index_.root_base(), "");
  if (provably_empty(normalized(root), 2)) fail("unsatisfiable: no JSON value validates against the schema");
  const RuleId rule = value_rule(root);
  try {
    return builder_.finish(rule);
  } catch (const GrammarError& e) {
    if (std::string(e.what()).find("unsatisfiable") != std::string::npos)
      fail("unsatisfiable: no JSON value validates against the schema");
    throw;
  }
}

}  // namespace jsonschema

Grammar json_schema_grammar(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options) {
  try {
    jsonschema::Compiler compiler(schema, options);
    return compiler.compile();
  } catch (const nlohmann::json::exception& e) {  // a keyword's value of the wrong JSON type
    throw GrammarError(std::string("json schema: malformed schema: ") + e.what());
  }
}

Grammar json_schema_grammar(const nlohmann::json& schema, const JsonSchemaOptions& options) {
  return json_schema_grammar(nlohmann::ordered_json(schema), options);
}

Grammar json_object_grammar(const JsonSchemaOptions& options) {
  return json_schema_grammar(nlohmann::ordered_json{{"type", "object"}}, options);
}

}  // namespace ridge::grammar
