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
  const auto field = [&key](const std::string& text) { key += "|" + std::to_string(text.size()) + ":" + text; };
  for (const GrammarTag& tag : tags) {
    field(tag.begin);
    field(tag.schema);
    field(tag.end);
  }
  if (kind == Kind::kTagged) {
    field(prefix);
    field(separator);
    field(suffix);
    key += repeat ? "|r" : "|1";
  }
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
    case Kind::kTagged: return "tool_calls";
  }
  return "?";
}

std::optional<Whitespace> whitespace_from_name(std::string_view name) {
  if (name == "compact") return Whitespace::kCompact;
  if (name == "flexible") return Whitespace::kFlexible;
  if (name == "spaced") return Whitespace::kSpaced;
  return std::nullopt;
}

namespace {

Grammar tagged_grammar(const GrammarSpec& spec, const JsonSchemaOptions& options) {
  if (spec.tags.empty()) throw GrammarError("tagged: no tags were given");
  GrammarBuilder b;
  const RuleId root = b.add_rule("root");
  const RuleId one = b.add_rule("tag");
  for (size_t i = 0; i < spec.tags.size(); ++i) {
    const GrammarTag& tag = spec.tags[i];
    nlohmann::ordered_json schema;
    try {
      schema = nlohmann::ordered_json::parse(tag.schema);
    } catch (const nlohmann::json::exception& e) {
      throw GrammarError(fmt::format("json schema: not valid JSON: {}", e.what()));
    }
    Sequence seq = GrammarBuilder::literal(tag.begin);
    seq.push_back(Symbol::of_rule(b.embed(json_schema_grammar(schema, options), fmt::format("tag{}-", i))));
    GrammarBuilder::append(seq, GrammarBuilder::literal(tag.end));
    b.add_alternative(one, std::move(seq));
  }
  Sequence body{Symbol::of_rule(one)};
  if (spec.repeat) {
    Sequence more = GrammarBuilder::literal(spec.separator);
    more.push_back(Symbol::of_rule(one));
    body.push_back(b.repeat(more, 0, -1, "more-tags"));
  }
  Sequence seq = GrammarBuilder::literal(spec.prefix);
  GrammarBuilder::append(seq, body);
  GrammarBuilder::append(seq, GrammarBuilder::literal(spec.suffix));
  b.add_alternative(root, std::move(seq));
  return b.finish(root);
}

}  // namespace

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
    case GrammarSpec::Kind::kTagged: return tagged_grammar(spec, options);
  }
  throw GrammarError("unknown grammar kind");
}

}  // namespace ridge::grammar
