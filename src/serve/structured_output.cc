#include "serve/structured_output.h"

#include <fmt/format.h>

#include "serve/api_error.h"

namespace ridge {

namespace {

using json = nlohmann::ordered_json;  // a schema keeps its members' order
using grammar::GrammarSpec;

[[noreturn]] void bad(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

std::string schema_text(const json& v, const std::string& param) {
  if (v.is_string()) {
    try {
      return json::parse(v.get<std::string>()).dump();
    } catch (const json::exception&) {
      bad(param, fmt::format("'{}' is not a valid JSON schema (a string that is not JSON)", param));
    }
  }
  if (!v.is_object() && !v.is_boolean()) bad(param, fmt::format("'{}' must be a JSON schema (an object)", param));
  return v.dump();
}

std::string string_field(const json& v, const std::string& param) {
  if (!v.is_string()) bad(param, fmt::format("'{}' must be a string", param));
  return v.get<std::string>();
}

std::vector<std::string> choices_field(const json& v, const std::string& param) {
  if (!v.is_array() || v.empty()) bad(param, fmt::format("'{}' must be a non-empty array of strings", param));
  std::vector<std::string> out;
  for (const json& c : v) {
    if (!c.is_string()) bad(param, fmt::format("'{}' must be a non-empty array of strings", param));
    out.push_back(c.get<std::string>());
  }
  return out;
}

GrammarSpec spec_of(GrammarSpec::Kind kind, std::string source, std::vector<std::string> choices) {
  GrammarSpec spec;
  spec.kind = kind;
  spec.source = std::move(source);
  spec.choices = std::move(choices);
  return spec;
}

GrammarSpec from_response_format(const json& format) {
  if (!format.is_object()) bad("response_format", "'response_format' must be an object");
  const auto type_it = format.find("type");  // absent or null: "text"
  const std::string type =
      type_it == format.end() || type_it->is_null() ? "text" : string_field(*type_it, "response_format.type");
  GrammarSpec spec;
  if (type == "text") return spec;
  if (type == "json_object") {
    // llama.cpp also takes a schema here.
    if (const auto it = format.find("schema"); it != format.end()) {
      spec.kind = GrammarSpec::Kind::kJsonSchema;
      spec.source = schema_text(*it, "response_format.schema");
    } else {
      spec.kind = GrammarSpec::Kind::kJsonObject;
    }
    return spec;
  }
  if (type == "json_schema") {
    const auto js = format.find("json_schema");
    if (js == format.end() || !js->is_object())
      bad("response_format.json_schema", "'response_format.json_schema' must be an object with a 'schema'");
    const auto schema = js->find("schema");
    if (schema == js->end()) {
      spec.kind = GrammarSpec::Kind::kJsonObject;
      return spec;
    }
    spec.kind = GrammarSpec::Kind::kJsonSchema;
    spec.source = schema_text(*schema, "response_format.json_schema.schema");
    return spec;
  }
  bad("response_format.type",
      fmt::format("'response_format.type' must be 'text', 'json_object' or 'json_schema', not '{}'", type));
}

}  // namespace

GrammarSpec read_structured_output(const nlohmann::ordered_json& body) {
  std::vector<std::pair<std::string, GrammarSpec>> given;
  auto add = [&](const std::string& name, GrammarSpec spec) {
    if (!spec.empty()) given.emplace_back(name, std::move(spec));
  };
  auto has = [&](const char* name) { return body.contains(name) && !body.at(name).is_null(); };
  if (has("response_format")) add("response_format", from_response_format(body.at("response_format")));
  if (has("guided_json")) add("guided_json", spec_of(GrammarSpec::Kind::kJsonSchema, schema_text(body.at("guided_json"), "guided_json"), {}));
  if (has("json_schema")) add("json_schema", spec_of(GrammarSpec::Kind::kJsonSchema, schema_text(body.at("json_schema"), "json_schema"), {}));
  if (has("guided_regex")) add("guided_regex", spec_of(GrammarSpec::Kind::kRegex, string_field(body.at("guided_regex"), "guided_regex"), {}));
  if (has("guided_choice")) add("guided_choice", spec_of(GrammarSpec::Kind::kChoice, {}, choices_field(body.at("guided_choice"), "guided_choice")));
  for (const char* name : {"guided_grammar", "grammar"})
    if (has(name)) add(name, spec_of(GrammarSpec::Kind::kGbnf, string_field(body.at(name), name), {}));
  if (has("structured_outputs")) {
    const json& so = body.at("structured_outputs");
    if (!so.is_object()) bad("structured_outputs", "'structured_outputs' must be an object");
    if (so.contains("json")) add("structured_outputs.json", spec_of(GrammarSpec::Kind::kJsonSchema, schema_text(so.at("json"), "structured_outputs.json"), {}));
    if (so.contains("regex")) add("structured_outputs.regex", spec_of(GrammarSpec::Kind::kRegex, string_field(so.at("regex"), "structured_outputs.regex"), {}));
    if (so.contains("choice")) add("structured_outputs.choice", spec_of(GrammarSpec::Kind::kChoice, {}, choices_field(so.at("choice"), "structured_outputs.choice")));
    if (so.contains("grammar")) add("structured_outputs.grammar", spec_of(GrammarSpec::Kind::kGbnf, string_field(so.at("grammar"), "structured_outputs.grammar"), {}));
    const auto json_object = so.find("json_object");
    if (json_object != so.end() && !json_object->is_null() && !json_object->is_boolean())
      bad("structured_outputs.json_object", "'structured_outputs.json_object' must be a boolean");
    if (json_object != so.end() && json_object->is_boolean() && json_object->get<bool>()) add("structured_outputs.json_object", spec_of(GrammarSpec::Kind::kJsonObject, {}, {}));
  }
  if (given.empty()) return {};
  if (given.size() > 1)
    bad(given[1].first, fmt::format("'{}' and '{}' both constrain the output; send one", given[0].first, given[1].first));
  GrammarSpec spec = std::move(given[0].second);
  if (has("whitespace")) {
    const std::string ws = string_field(body.at("whitespace"), "whitespace");
    const auto policy = grammar::whitespace_from_name(ws);
    if (!policy) bad("whitespace", "'whitespace' must be 'compact', 'flexible' or 'spaced'");
    spec.whitespace = *policy;
  }
  return spec;
}

}  // namespace ridge
