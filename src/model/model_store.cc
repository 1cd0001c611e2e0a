#include "model/model_store.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "hub/pull.h"

namespace ridge {

std::string ridge_home() {
  if (const char* home = std::getenv("RIDGE_HOME"); home && *home) return home;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ridge";
  return ".ridge";
}

std::string models_dir() { return ridge_home() + "/models"; }

namespace {

// The real models tools/fetch_model.py assembles, by the names it takes.
struct NamedModel {
  const char* name;
  const char* file;
};
constexpr NamedModel kNamedModels[] = {
    {"default", kDefaultModelFile},
    {"qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct.gguf"},
    {"qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf"},
    {"gemma3-270m", "gemma-3-270m-Q4_K_M.gguf"},
    {"all-minilm-l6-v2", "all-MiniLM-L6-v2"},  // a sentence-transformers directory
    {"minilm", "all-MiniLM-L6-v2"},
    {"embeddinggemma-300m", "embeddinggemma-300m"},
    {"embeddinggemma", "embeddinggemma-300m"},
};

}  // namespace

std::string resolve_model_path(const std::string& model_arg) {
  if (hub::is_hub_uri(model_arg)) return hub::pull_model(hub::parse_repo_ref(model_arg), hub::hub_config_from_env()).path;
  const std::string name = model_arg.empty() ? "default" : model_arg;
  for (const NamedModel& m : kNamedModels) {
    if (name != m.name) continue;
    const std::string path = models_dir() + "/" + m.file;
    if (std::filesystem::exists(path)) return path;
    if (name == "default")
      fail("the default model is not in {} yet: run `make model` (or python3 tools/fetch_model.py)", models_dir());
    fail("the model '{}' is not in {} yet: run python3 tools/fetch_model.py {}", name, models_dir(), name);
  }
  if (!std::filesystem::exists(model_arg)) fail("model file '{}' does not exist", model_arg);
  return model_arg;
}

}  // namespace ridge
