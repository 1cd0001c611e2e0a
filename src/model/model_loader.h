#pragma once
#include <string>

#include "model/weights.h"

namespace ridge {

// A GGUF file, or a directory holding config.json and safetensors shards (one file or an index).
Model load_model(const std::string& path);

}  // namespace ridge
