#pragma once
// What each family adds to the fields every config.json shares (hf_config.cc): experts, latent
// attention, Gemma 3's windows and scales. Each is called with the common fields already in spec.
#include <nlohmann/json.hpp>

#include "model/safetensors/hf_config.h"

namespace ridge::hf {

// rope_scaling: null, linear, llama3 (and yarn when `yarn_allowed`: DeepSeek's).
RopeScaling rope_scaling(const nlohmann::json& config, const std::string& arch, bool yarn_allowed);

// mixtral, qwen2_moe, qwen3_moe, olmoe: experts, routing, shared expert, dense layers.
void read_moe_fields(const nlohmann::json& config, HfConfig& c);
// deepseek_v2, deepseek_v3: latent attention, YaRN, routing.
void read_deepseek_fields(const nlohmann::json& config, HfConfig& c);
// gemma3_text: GeGLU, windows, score scale, softcaps, embedding scale.
void read_gemma3_fields(const nlohmann::json& config, HfConfig& c);

}  // namespace ridge::hf
