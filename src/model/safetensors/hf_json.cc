#include "model/safetensors/hf_json.h"

#include "core/error.h"

namespace ridge::hf {

using nlohmann::json;

const json* field(const json& config, const char* key) {
  const auto it = config.find(key);
  return it == config.end() || it->is_null() ? nullptr : &*it;
}

int64_t int_field(const json& config, const char* key, std::optional<int64_t> fallback) {
  const json* value = field(config, key);
  if (!value) {
    if (!fallback) fail("config.json: missing '{}'", key);
    return *fallback;
  }
  if (!value->is_number_integer()) fail("config.json: '{}' must be an integer", key);
  return value->get<int64_t>();
}

double number_field(const json& config, const char* key, double fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_number()) fail("config.json: '{}' must be a number", key);
  return value->get<double>();
}

bool bool_field(const json& config, const char* key, bool fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_boolean()) fail("config.json: '{}' must be true or false", key);
  return value->get<bool>();
}

std::string string_field(const json& config, const char* key, const std::string& fallback) {
  const json* value = field(config, key);
  if (!value) return fallback;
  if (!value->is_string()) fail("config.json: '{}' must be a string", key);
  return value->get<std::string>();
}

}  // namespace ridge::hf
