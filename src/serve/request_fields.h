#pragma once
// Reading the fields of a JSON request body, for the APIs whose bodies are read with key order
// kept (anthropic_request, responses_request). Every mistake is an ApiError (400) naming the field.
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chat/tools.h"
#include "serve/api_error.h"

namespace ridge::request_fields {

using Json = nlohmann::ordered_json;

// The body as a JSON object.
inline Json parse_body(std::string_view text) {
  Json body;
  try {
    body = Json::parse(text);
  } catch (const Json::exception& e) {
    throw ApiError(400, fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return body;
}

// A member that is present and not null; nullptr otherwise.
inline const Json* member(const Json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

inline std::string string_field(const Json& object, const char* name, const std::string& where) {
  const Json* v = member(object, name);
  if (!v || !v->is_string()) throw_bad_param(where, fmt::format("'{}' must be a string", where));
  return v->get<std::string>();
}

inline double number_field(const Json& body, const char* name, double lo, double hi, double otherwise) {
  const Json* v = member(body, name);
  if (!v) return otherwise;
  if (!v->is_number() || v->get<double>() < lo || v->get<double>() > hi)
    throw_bad_param(name, fmt::format("'{}' must be a number between {} and {}", name, lo, hi));
  return v->get<double>();
}

// A function tool as the chat templates print it, {"type": "function", "function": {"name",
// "description" (when given), "parameters"}}, from an API whose tools are flat (Anthropic's name /
// description / input_schema, the Responses API's name / description / parameters).
inline chat::Tool function_tool(std::string name, const Json* description, Json parameters) {
  chat::Tool tool;
  tool.name = std::move(name);
  tool.parameters = std::move(parameters);
  tool.function = Json{{"name", tool.name}};
  if (description) tool.function["description"] = *description;
  tool.function["parameters"] = tool.parameters;
  tool.definition = Json{{"type", "function"}, {"function", tool.function}};
  return tool;
}

// A tool_choice naming a tool: it must be one of the tools offered.
inline void require_offered(const std::vector<chat::Tool>& tools, const std::string& name, const std::string& param) {
  for (const auto& t : tools)
    if (t.name == name) return;
  throw_bad_param(param, fmt::format("'tool_choice' names '{}', which is not in 'tools'", name));
}

// logit_bias: {"token id": bias in [-100, 100]} (ids are checked against the vocabulary later).
template <typename AnyJson>
std::vector<std::pair<int32_t, float>> logit_bias(const AnyJson& bias) {
  if (!bias.is_object()) throw_bad_param("logit_bias", "'logit_bias' must be an object of token ids to biases");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : bias.items()) {
    char* end = nullptr;
    const long long id = std::strtoll(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id < 0 || id > std::numeric_limits<int32_t>::max())
      throw_bad_param("logit_bias", fmt::format("'logit_bias' keys must be token ids, got '{}'", key));
    if (!value.is_number() || !(value.template get<double>() >= -100 && value.template get<double>() <= 100))
      throw_bad_param("logit_bias", fmt::format("'logit_bias' of token {} must be a number between -100 and 100", key));
    out.emplace_back(int32_t(id), float(value.template get<double>()));
  }
  return out;
}

}  // namespace ridge::request_fields
