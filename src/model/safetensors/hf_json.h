#pragma once
// Typed reads of config.json fields. A field that is absent or null counts as not given (Mistral
// writes "head_dim": null); one of the wrong type is an Error naming it.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ridge::hf {

const nlohmann::json* field(const nlohmann::json& config, const char* key);
int64_t int_field(const nlohmann::json& config, const char* key, std::optional<int64_t> fallback = std::nullopt);
double number_field(const nlohmann::json& config, const char* key, double fallback);
bool bool_field(const nlohmann::json& config, const char* key, bool fallback);
std::string string_field(const nlohmann::json& config, const char* key, const std::string& fallback);

}  // namespace ridge::hf
