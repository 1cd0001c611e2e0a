#pragma once
// Loading a Hugging Face Llama-family checkpoint directory (config.json + safetensors, single or
// sharded) into the shared weight layout. PyTorch's [out, in] matrices are already the layout
// WeightRef wants (rows = out features, each a contiguous row of in features): nothing is
// transposed or permuted, and matrices stay in the memory map in their stored type.
#include <string>

#include "model/weights.h"

namespace ridge {

// Error (prefixed with `dir`) naming the missing tensor, wrong shape or unsupported dtype.
Model load_safetensors_model(const std::string& dir);

}  // namespace ridge
