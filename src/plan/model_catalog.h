#pragma once
// Named model shapes: public architectures by name, so the planner (and `ridge synth`, which writes
// random-weight GGUF files of these shapes) need no checkpoint. The shapes are the published configs.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace ridge::plan {

// "llama-3-70b", "deepseek-v3", ... (case-insensitive); nullopt when the name is not in the catalogue.
std::optional<ModelSpec> named_model_spec(std::string_view name);
std::vector<std::string> named_model_names();

}  // namespace ridge::plan
