// ImportanceMatrix: sums and counts, the weights the quantizer gets, and the GGUF round trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "quant/importance_matrix.h"

namespace ridge::quant {
namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("ridge_imatrix_") + name)).string();
}

TEST(ImportanceMatrix, SumsSquaresPerColumn) {
  ImportanceMatrix m;
  const float x[] = {1, 2, 3, -1, 0, 2};  // 2 tokens x 3 columns
  m.accumulate("blk.0.ffn_up.weight", x, 2, 3);
  m.accumulate("blk.0.ffn_up.weight", x, 1, 3);
  const auto* w = m.find("blk.0.ffn_up.weight");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->size(), 3u);
  EXPECT_FLOAT_EQ((*w)[0], (1 + 1 + 1) / 3.0f);
  EXPECT_FLOAT_EQ((*w)[1], (4 + 0 + 4) / 3.0f);
  EXPECT_FLOAT_EQ((*w)[2], (9 + 4 + 9) / 3.0f);
  EXPECT_EQ(m.find("blk.0.ffn_down.weight"), nullptr);
  EXPECT_THROW(m.accumulate("blk.0.ffn_up.weight", x, 1, 2), Error);  // other columns than before
}

TEST(ImportanceMatrix, ExpertsWithoutTokensWeighOne) {
  ImportanceMatrix m;
  const float x[] = {2, 2};
  m.accumulate("blk.0.ffn_up_exps.weight", x, 1, 2, /*mat=*/1, /*n_mat=*/3);
  const auto* w = m.find("blk.0.ffn_up_exps.weight");
  ASSERT_EQ(w->size(), 6u);
  EXPECT_EQ((*w)[0], 1.0f);
  EXPECT_EQ((*w)[2], 4.0f);
  EXPECT_EQ((*w)[5], 1.0f);
}

TEST(ImportanceMatrix, GgufRoundTrip) {
  ImportanceMatrix m;
  const float x[] = {0.5f, -1.5f, 2.0f, 4.0f};
  m.accumulate("blk.1.attn_q.weight", x, 2, 2);
  m.accumulate("blk.0.attn_q.weight", x, 1, 4);
  m.datasets = {"calibration.txt"};
  m.chunk_count = 3;
  m.chunk_size = 512;
  const std::string path = temp_path("roundtrip.gguf");
  m.save(path);
  const ImportanceMatrix back = ImportanceMatrix::load(path);
  EXPECT_EQ(back.size(), 2u);
  EXPECT_EQ(back.datasets, m.datasets);
  EXPECT_EQ(back.chunk_count, 3);
  EXPECT_EQ(back.chunk_size, 512);
  for (const char* name : {"blk.0.attn_q.weight", "blk.1.attn_q.weight"}) EXPECT_EQ(*back.find(name), *m.find(name)) << name;
  std::filesystem::remove(path);
}

TEST(ImportanceMatrix, RejectsFilesThatAreNoImatrix) {
  const std::string path = temp_path("garbage.gguf");
  std::ofstream(path) << "not a gguf file at all";
  EXPECT_THROW(ImportanceMatrix::load(path), Error);
  std::filesystem::remove(path);
  EXPECT_THROW(ImportanceMatrix::load(temp_path("missing.gguf")), Error);
}

}  // namespace
}  // namespace ridge::quant
