#pragma once
// Reading the fields of a JSON request body, for the APIs whose bodies are read with key order
// kept (anthropic_request, responses_request). Every mistake is an ApiError (400) naming the field.
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

}  // namespace ridge::request_fields
