#pragma once
// Small hand-made Hugging Face tokenizer directories for the tokenizer.json tests: each test writes
// the files it needs into a fresh temporary directory.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace ridge::testing {

class HfDir {
 public:
  HfDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ridge_hf_tok_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~HfDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  HfDir(const HfDir&) = delete;
  HfDir& operator=(const HfDir&) = delete;

  // Writes `name` (tokenizer.json, tokenizer_config.json, ...) and returns the directory.
  const HfDir& write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return *this;
  }
  std::string dir() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ridge::testing
