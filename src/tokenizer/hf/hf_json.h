#pragma once
// Shared helpers of the tokenizer.json readers.
#include <nlohmann/json.hpp>
#include <string>

namespace ridge::hf {

using nlohmann::json;

// A component's "type" ("" when it has none).
std::string type_of(const json& j);
// A Split / Replace pattern: {"String": s} -> s; {"Regex": r} -> r with regex set; Error otherwise.
std::string pattern_of(const json& j, bool& regex);
// The text of a regex that only matches itself (no metacharacters), else false.
bool regex_is_literal(const std::string& regex, std::string& literal);

// Parts of load_pipeline.
struct Pipeline;
struct Model;
void load_model(const json& j, Model& model);
void load_text_steps(const json& root, Pipeline& pipeline);      // normalizer, pre_tokenizer, decoder
void load_post_processor(const json& root, Pipeline& pipeline);

}  // namespace ridge::hf
