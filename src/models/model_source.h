#pragma once
// Where a served model comes from: its name (what clients send), aliases, and the file, directory
// or fetcher name it is loaded from. `-m [NAME=]SOURCE` and `--models-dir DIR` make these.
#include <string>
#include <vector>

namespace ridge::models {

struct ModelSource {
  std::string name;
  std::vector<std::string> aliases;
  std::string source;  // a GGUF file, a model directory, a fetcher name ("default", "gemma3-270m") or hf://ORG/REPO[:QUANT]
  bool from_models_dir = false;
};

// "NAME=SOURCE" or "SOURCE" (named after the fetcher name, the file's stem, the directory or the Hub repository).
ModelSource parse_model_arg(const std::string& arg);
// The name a source gets when none is given.
std::string default_model_name(const std::string& source);
// Every model in `dir` (not recursive; symlinks followed one step, loops and unreadable entries
// skipped): *.gguf files, and directories holding a model (modules.json / config.json).
std::vector<ModelSource> scan_models_dir(const std::string& dir);
// A name a client may send: no path separators, no "..", printable, at most 256 bytes.
bool is_valid_model_name(const std::string& name);

}  // namespace ridge::models
