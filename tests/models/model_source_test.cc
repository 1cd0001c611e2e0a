#include "models/model_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace ridge::testing {
namespace {

namespace fs = std::filesystem;
using models::is_valid_model_name;
using models::parse_model_arg;

TEST(ModelSource, NamesFromArguments) {
  EXPECT_EQ(parse_model_arg("default").name, "default");
  EXPECT_EQ(parse_model_arg("default").source, "default");
  EXPECT_EQ(parse_model_arg("/m/Qwen2.5-0.5B.Q4_K_M.gguf").name, "Qwen2.5-0.5B.Q4_K_M");
  EXPECT_EQ(parse_model_arg("coder=/m/q.gguf").name, "coder");
  EXPECT_EQ(parse_model_arg("coder=/m/q.gguf").source, "/m/q.gguf");
  EXPECT_EQ(parse_model_arg("/m/a=b.gguf").name, "a=b");  // '=' after a '/' is part of the path
  EXPECT_EQ(parse_model_arg("/m/minilm/").name, "minilm");
  EXPECT_THROW(parse_model_arg("x="), Error);
  EXPECT_THROW(parse_model_arg("a b=/m/q.gguf"), Error);
}

TEST(ModelSource, NamesAreNeverPaths) {
  EXPECT_TRUE(is_valid_model_name("qwen2.5-coder-0.5b"));
  EXPECT_TRUE(is_valid_model_name("org:tag_1"));
  for (const char* bad : {"", ".", "..", "../../etc/passwd", "/etc/passwd", "a/b", "a\\b", "a..b", "a b", "a\"b", "\n"})
    EXPECT_FALSE(is_valid_model_name(bad)) << bad;
  EXPECT_FALSE(is_valid_model_name(std::string(300, 'a')));
}

TEST(ModelSource, ScanningADirectory) {
  const fs::path dir = fs::temp_directory_path() / ("ridge-models-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "minilm");
  fs::create_directories(dir / "junk");
  std::ofstream(dir / "a.gguf") << "GGUF";
  std::ofstream(dir / "notes.txt") << "x";
  std::ofstream(dir / "big-00001-of-00002.gguf") << "GGUF";
  std::ofstream(dir / "big-00002-of-00002.gguf") << "GGUF";
  std::ofstream(dir / "minilm" / "modules.json") << "[]";
  std::ofstream(dir / ".hidden.gguf") << "GGUF";
  fs::create_directory_symlink(dir, dir / "loop");          // a loop: skipped, never followed twice
  fs::create_symlink(dir / "missing.gguf", dir / "dangling.gguf");
  fs::create_symlink(dir / "a.gguf", dir / "alias.gguf");
  const auto found = models::scan_models_dir(dir.string());
  std::vector<std::string> names;
  for (const auto& m : found) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "alias", "big-00001-of-00002", "minilm"}));
  for (const auto& m : found) EXPECT_TRUE(m.from_models_dir);
  EXPECT_THROW(models::scan_models_dir((dir / "a.gguf").string()), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ridge::testing
