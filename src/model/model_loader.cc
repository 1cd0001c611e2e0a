#include "model/model_loader.h"

#include <filesystem>

#include "model/load_gguf.h"

namespace ridge {

Model load_model(const std::string& path) {
  return load_gguf_model(path);
}

}  // namespace ridge
