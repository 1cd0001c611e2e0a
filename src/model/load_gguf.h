#pragma once
#include <memory>
#include <string>

#include "model/gguf/gguf_file.h"
#include "model/shard.h"
#include "model/weights.h"

namespace ridge {

// The shapes of a GGUF model from its metadata ({arch}.block_count, ...). Error when the
// architecture is not one ridge runs or a required key is missing.
ModelSpec model_spec_from_gguf(const gguf::GgufFile& file);

// Bind a GGUF file's tensors to the Llama-family weight layout. Every tensor's shape and type
// is checked against the spec; matrices keep their stored format and are copied once into huge pages,
// which the Model keeps alive.
// With a shard request, only that rank's part of the weights is copied (model/shard.h).
Model load_gguf_model(std::shared_ptr<const gguf::GgufFile> file, const ShardRequest* shard = nullptr);
Model load_gguf_model(const std::string& path, const ShardRequest* shard = nullptr);

}  // namespace ridge
