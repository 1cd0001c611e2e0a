#pragma once
// Hugging Face config.json -> ModelSpec for every architecture ridge runs: llama, mistral, mixtral,
// qwen2, qwen2_moe, qwen3, qwen3_moe, olmoe, gemma3 / gemma3_text, deepseek_v2, deepseek_v3.
// HF checkpoints rotate q/k with rotate_half on unpermuted weights: their rope_style is NeoX
// (DeepSeek's interleaved RoPE excepted: Normal, as its weights come).
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace ridge {

// What the loader needs beside the spec to find the checkpoint's tensors.
struct HfConfig {
  ModelSpec spec;
  std::string model_type;     // as config.json names it ("mixtral", "qwen3_moe", ...)
  std::string prefix = "model.";  // before "layers.N." / "embed_tokens" ("language_model.model." in Gemma 3 with vision)
  int64_t n_layer_stored = 0;  // layers in the checkpoint (DeepSeek-V3's prediction layers follow the trunk)
};

// Error naming the field when one is missing, mistyped, or asks for something ridge does not run
// (another model_type, an activation, a rope_scaling type, a quantization method).
HfConfig hf_config_from_json(const nlohmann::json& config);
ModelSpec model_spec_from_hf_config(const nlohmann::json& config);

// Reads and parses `path` (a config.json); errors start with "config.json:" (callers add the directory).
HfConfig read_hf_checkpoint_config(const std::string& path);
ModelSpec read_hf_config(const std::string& path);

}  // namespace ridge
