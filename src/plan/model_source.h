#pragma once
// What `ridge plan MODEL` and `ridge lint MODEL` accept: a name from the catalogue, a GGUF file
// ('default' = the default model), an HF config.json, or a checkpoint directory holding one.
#include <optional>
#include <string>

#include "plan/cost_model.h"

namespace ridge::plan {

struct PlanModel {
  ModelSpec spec;
  std::string source;                  // "catalogue", or the file it came from
  std::optional<Precision> precision;  // a GGUF file's own weight types
  std::string weights_note;            // "layers q4_1 (5.00 bits), embeddings q8_0"
};

PlanModel resolve_plan_model(const std::string& arg);

}  // namespace ridge::plan
