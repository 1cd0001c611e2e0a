#include "models/model_source.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "hub/repo_ref.h"

namespace ridge::models {

namespace fs = std::filesystem;

bool is_valid_model_name(const std::string& name) {
  if (name.empty() || name.size() > 256 || name == "." || name == "..") return false;
  if (name.find("..") != std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c < 0x7f && c != '/' && c != '\\' && c != '"'; });
}

std::string default_model_name(const std::string& source) {
  if (hub::is_hub_uri(source)) {  // hf://ORG/REPO[:QUANT]: the repository's name
    const std::string repo = hub::parse_repo_ref(source).repo_id;
    return repo.substr(repo.find('/') + 1);
  }
  const fs::path p(source);
  if (!p.has_parent_path() && p.extension() != ".gguf") return source;  // a fetcher name
  std::string name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "dir/"
  if (name.size() > 5 && name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name;
}

ModelSource parse_model_arg(const std::string& arg) {
  ModelSource m;
  const size_t eq = arg.find('=');
  if (eq != std::string::npos && eq > 0 && arg.find('/') > eq) {
    m.name = arg.substr(0, eq);
    m.source = arg.substr(eq + 1);
  } else {
    m.source = arg;
    m.name = default_model_name(arg);
  }
  if (m.source.empty()) fail("-m '{}': no model after the name", arg);
  if (!is_valid_model_name(m.name)) fail("-m '{}': '{}' is not a usable model name (no '/', '..' or spaces)", arg, m.name);
  return m;
}

namespace {

bool is_model_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "modules.json", ec) || fs::is_regular_file(dir / "config.json", ec);
}

}  // namespace

std::vector<ModelSource> scan_models_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("--models-dir '{}' is not a directory", dir);
  std::vector<ModelSource> out;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) fail("--models-dir '{}': {}", dir, ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path p = it->path();
    const std::string file = p.filename().string();
    if (file.empty() || file[0] == '.') continue;
    std::error_code e2;
    const fs::file_status st = fs::status(p, e2);  // follows a symlink; a loop is an error here
    if (e2) continue;
    ModelSource m;
    if (fs::is_regular_file(st) && p.extension() == ".gguf") {
      // Split files: only the first shard names the model.
      if (file.find("-of-") != std::string::npos && file.find("-00001-of-") == std::string::npos) continue;
      m.name = file.substr(0, file.size() - 5);
    } else if (fs::is_directory(st) && is_model_dir(p)) {
      m.name = file;
    } else {
      continue;
    }
    if (!is_valid_model_name(m.name)) continue;
    m.source = p.string();
    m.from_models_dir = true;
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const ModelSource& a, const ModelSource& b) { return a.name < b.name; });
  return out;
}

}  // namespace ridge::models
