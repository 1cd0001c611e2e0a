#include "grammar/grammar_spec.h"

#include <fmt/format.h>

#include "grammar/builder.h"
#include "grammar/gbnf.h"
#include "grammar/regex.h"

namespace ridge::grammar {

std::string GrammarSpec::cache_key() const {
  std::string key = fmt::format("{}|{}|", static_cast<int>(kind), static_cast<int>(whitespace));
  key += std::to_string(source.size()) + ":" + source;
  for (const std::string& c : choices) key += "|" + std::to_string(c.size()) + ":" + c;
  return key;
}

std::string GrammarSpec::describe() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kJsonObject: return "json_object";
    case Kind::kJsonSchema: return "json_schema";
    case Kind::kRegex: return "regex";
    case Kind::kChoice: return "choice";
    case Kind::kGbnf: return "grammar";
  }
  return "?";
}

Grammar build_grammar(const GrammarSpec& spec) {
  JsonSchemaOptions options;
  options.whitespace = spec.whitespace;
  switch (spec.kind) {
    case GrammarSpec::Kind::kNone: throw GrammarError("no grammar was given");
    case GrammarSpec::Kind::kJsonObject: return json_object_grammar(options);
    case GrammarSpec::Kind::kJsonSchema: {
      nlohmann::ordered_json schema;  // ordered: members are generated in the schema's order
      try {
        schema = nlohmann::ordered_json::parse(spec.source);
      } catch (const nlohmann::json::exception& e) {
        throw GrammarError(fmt::format("json schema: not valid JSON: {}", e.what()));
      }
      return json_schema_grammar(schema, options);
    }
    case GrammarSpec::Kind::kRegex: return regex_grammar(spec.source);
    case GrammarSpec::Kind::kGbnf: return parse_gbnf(spec.source);
    case GrammarSpec::Kind::kChoice: {
      if (spec.choices.empty()) throw GrammarError("choice: the list of choices is empty");
      GrammarBuilder b;
      const RuleId root = b.add_rule("root");
      for (const std::string& c : spec.choices) b.add_alternative(root, GrammarBuilder::literal(c));
      return b.finish(root);
    }
  }
  throw GrammarError("unknown grammar kind");
}

}  // namespace ridge::grammar
