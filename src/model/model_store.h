#pragma once
// Where models live on disk and what "-m default" means.
#include <string>

namespace ridge {

// The default model: SmolLM2-135M-Instruct, GGUF Q4_1, fetched by tools/fetch_model.py.
inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";
inline constexpr const char* kDefaultModelSha256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

// $RIDGE_HOME, else ~/.cache/ridge.
std::string ridge_home();
std::string models_dir();

// "" or "default" -> the default model in the cache (Error with the fetch command if it is absent);
// "hf://ORG/REPO[:QUANT]" -> fetched from the Hub (or found in its cache): the GGUF file (a split
// model's first shard) or a safetensors snapshot folder; anything else is a path that must exist.
std::string resolve_model_path(const std::string& model_arg);

}  // namespace ridge
