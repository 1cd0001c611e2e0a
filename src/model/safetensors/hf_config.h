#pragma once
// Hugging Face config.json -> ModelSpec, for the Llama family (model_type llama, mistral, qwen2).
// HF checkpoints rotate q/k with rotate_half on unpermuted weights: their rope_style is NeoX.
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace ridge {

// Error naming the field when one is missing, mistyped, or asks for something ridge does not run
// (another model_type, an activation other than silu, an unsupported rope_scaling).
ModelSpec model_spec_from_hf_config(const nlohmann::json& config);

// Reads and parses `path` (a config.json); errors start with "config.json:" (callers add the directory).
ModelSpec read_hf_config(const std::string& path);

}  // namespace ridge
