// Replays gguf_fuzz's corpus (fuzz/corpus/gguf_fuzz) through the same code the fuzz target runs, so a parser
// regression on any saved input shows up in the normal build, without clang or libFuzzer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../fuzz/gguf_exercise.h"

namespace ridge::gguf {
namespace {

TEST(GgufCorpus, EveryInputParsesOrIsRejected) {
  const auto dir = std::filesystem::path(RIDGE_TEST_DATA_DIR).parent_path().parent_path() / "fuzz" / "corpus" / "gguf_fuzz";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int n_inputs = 0, n_parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    ++n_inputs;
    EXPECT_NO_FATAL_FAILURE(n_parsed += fuzz::exercise_gguf(bytes) ? 1 : 0) << entry.path();
  }
  EXPECT_GT(n_inputs, 0);
  EXPECT_GT(n_parsed, 0);  // the seeds include valid files
}

}  // namespace
}  // namespace ridge::gguf
