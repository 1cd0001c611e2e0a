#include "model/model_loader.h"

#include <filesystem>

#include "model/load_gguf.h"
#include "model/safetensors/load_safetensors.h"

namespace ridge {

Model load_model(const std::string& path) {
  if (std::filesystem::is_directory(path)) return load_safetensors_model(path);
  return load_gguf_model(path);
}

}  // namespace ridge
