#pragma once
// Shared helpers of the tokenizer.json readers.
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace ridge::hf {

using nlohmann::json;

// A component's "type" ("" when it has none).
std::string type_of(const json& j);
// A Split / Replace pattern: {"String": s} -> s; {"Regex": r} -> r with regex set; Error otherwise.
std::string pattern_of(const json& j, bool& regex);
// An integer field: Error for anything else, and for a float that is not a whole number in range
// (nlohmann's get<int64_t> of 1e62 is undefined behaviour).
int64_t integer_of(const json& j, std::string_view what);
// obj[key] as a count (>= 0), or `fallback` when absent.
size_t count_of(const json& obj, const char* key, size_t fallback);
// The text of a regex that only matches itself (no metacharacters), else false.
bool regex_is_literal(const std::string& regex, std::string& literal);

// Parts of load_pipeline.
struct Pipeline;
struct Model;
void load_model(const json& j, Model& model);
void load_text_steps(const json& root, Pipeline& pipeline);      // normalizer, pre_tokenizer, decoder
void load_post_processor(const json& root, Pipeline& pipeline);

}  // namespace ridge::hf
