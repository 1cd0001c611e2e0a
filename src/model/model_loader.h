#pragma once
#include <string>

#include "model/shard.h"
#include "model/weights.h"

namespace ridge {

// A GGUF file, or a directory holding config.json and safetensors shards (one file or an index).
// With a shard request, only that rank's part of the weights (model/shard.h).
Model load_model(const std::string& path, const ShardRequest* shard = nullptr);

}  // namespace ridge
