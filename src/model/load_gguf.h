#pragma once
#include <string>

#include "model/gguf/gguf_file.h"
#include "model/weights.h"

namespace ridge {

// The shapes of a GGUF model from its metadata ({arch}.block_count, ...). Error when the
// architecture is not one ridge runs or a required key is missing.
ModelSpec model_spec_from_gguf(const gguf::GgufFile& file);

// Memory-map a GGUF file and bind its tensors to the Llama-family weight layout.
// Every tensor's shape and type is checked against the spec; matrices stay in the file.
Model load_gguf_model(const std::string& path);

}  // namespace ridge
