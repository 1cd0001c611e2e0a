#include "model/model_store.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace ridge {

std::string ridge_home() {
  if (const char* home = std::getenv("RIDGE_HOME"); home && *home) return home;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ridge";
  return ".ridge";
}

std::string models_dir() { return ridge_home() + "/models"; }

std::string resolve_model_path(const std::string& model_arg) {
  if (model_arg.empty() || model_arg == "default") {
    const std::string path = models_dir() + "/" + kDefaultModelFile;
    if (!std::filesystem::exists(path))
      fail("the default model is not in {} yet: run `make model` (or python3 tools/fetch_model.py)", models_dir());
    return path;
  }
  if (!std::filesystem::exists(model_arg)) fail("model file '{}' does not exist", model_arg);
  return model_arg;
}

}  // namespace ridge
