// The AMX BF16 prefill GEMM against its naive reference (bf16-rounded weights and activations,
// summed in double) over awkward shapes: partial tiles of tokens and rows, one and several
// 1,024-value slices of a row; and a token's result bit-identical alone, in any batch, and
// whatever rows a call is given.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu {
namespace {

// packed: regrouped as the loader does on AVX-512 VNNI CPUs (packed_layout.h), else as in the file.
std::vector<uint8_t> random_matrix(DType type, int64_t rows, int64_t cols, uint32_t seed, bool packed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<uint8_t> bytes(size_t(rows * dtype_row_bytes(type, cols)));
  if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float v = normal(rng) * 0.05f;
      if (type == DType::F32) std::memcpy(&bytes[size_t(4 * i)], &v, 4);
      const uint16_t h = type == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
      if (type != DType::F32) std::memcpy(&bytes[size_t(2 * i)], &h, 2);
    }
    return bytes;
  }
  for (auto& b : bytes) b = uint8_t(rng());
  const int64_t block_bytes = dtype_info(type).block_bytes;
  // Where each block keeps its f16 scale: first, except Q6_K (last); a minimum next to it in Q4_1, Q4_K, Q5_K.
  const size_t d_at = type == DType::Q6_K ? size_t(block_bytes) - 2 : 0;
  for (size_t off = 0; off < bytes.size(); off += size_t(block_bytes)) {
    const uint16_t d = f32_to_f16(0.002f + 0.01f * std::fabs(normal(rng)));
    const uint16_t m = f32_to_f16(-0.05f * std::fabs(normal(rng)));
    std::memcpy(&bytes[off + d_at], &d, 2);
    if (type == DType::Q4_1 || type == DType::Q4_K || type == DType::Q5_K) std::memcpy(&bytes[off + 2], &m, 2);
  }
  if (packed) pack_rows(type, bytes.data(), rows, cols);
  return bytes;
}

struct Case {
  DType type;
  bool packed;
};

std::vector<uint16_t> tiled(const std::vector<float>& x, int64_t n_tokens, int64_t cols) {
  const int64_t tiles = (n_tokens + 15) / 16, tile_words = cols / kBf16StepValues * kBf16StepWords;
  std::vector<uint16_t> a(size_t(tiles * tile_words));
  for (int64_t j = 0; j < tiles; ++j) tile_activations_bf16(x.data(), n_tokens, cols, j, a.data() + j * tile_words);
  return a;
}

TEST(Bf16Gemm, MatchesTheReferenceAndIsTheSameAloneAndBatched) {
  if (!amx_bf16_usable()) GTEST_SKIP() << "this CPU has no AMX-BF16 (or the OS did not grant the tile state)";
  const Case cases[] = {{DType::Q4_0, true}, {DType::Q4_1, true}, {DType::Q8_0, true}, {DType::BF16, false},
                        {DType::F16, false},  {DType::F32, false},  {DType::Q6_K, false}, {DType::Q4_K, false},
                        {DType::Q5_K, false}, {DType::Q5_0, false}, {DType::Q6_K, true},  {DType::Q4_K, true},
                        {DType::Q5_K, true}};
  for (const Case& c : cases)
    for (int64_t cols : {32, 96, 1024, 1056, 2080, 2304})
      for (int64_t rows : {16, 37, 64, 81}) {
        if (cols % dtype_info(c.type).block_size != 0) continue;
        const auto w = random_matrix(c.type, rows, cols, uint32_t(rows * 7 + cols), c.packed);
        const int64_t n_tokens = 41;  // two full tiles of tokens and a partial one
        std::mt19937 rng(static_cast<uint32_t>(cols));
        std::normal_distribution<float> normal;
        std::vector<float> x(size_t(n_tokens * cols));
        for (float& v : x) v = normal(rng);
        const auto a = tiled(x, n_tokens, cols);
        std::vector<float> got(size_t(n_tokens * rows), -1.0f), want(got.size());
        Bf16GemmTask task{c.type, w.data(), c.packed, rows, cols, 0, rows, a.data(), n_tokens, got.data(), rows};
        bf16_gemm_amx(task);
        task.y = want.data();
        bf16_gemm_reference(task, x.data());
        std::vector<uint16_t> wrow(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; ++r) {
          bf16_weight_row(c.type, w.data(), c.packed, rows, cols, r, wrow.data());
          for (int64_t t = 0; t < n_tokens; ++t) {
            double magnitude = 0;
            for (int64_t k = 0; k < cols; ++k)
              magnitude += std::fabs(double(bf16_to_f32(wrow[size_t(k)])) * x[size_t(t * cols + k)]);
            const size_t i = size_t(t * rows + r);
            ASSERT_NEAR(got[i], want[i], 1e-6 * magnitude + 1e-30)
                << dtype_name(c.type) << " rows " << rows << " cols " << cols << " row " << r << " token " << t;
          }
        }
        // Alone or in a smaller batch, and with the rows split at a tile boundary: the same bits.
        for (int64_t first : {int64_t(0), int64_t(5), int64_t(16), int64_t(40)})
          for (int64_t n : {int64_t(1), int64_t(16), int64_t(17)}) {
            if (first + n > n_tokens) continue;
            std::vector<float> xs(x.begin() + first * cols, x.begin() + (first + n) * cols);
            const auto as = tiled(xs, n, cols);
            std::vector<float> part(size_t(n * rows));
            for (int64_t r0 : {int64_t(0), int64_t(16)}) {
              if (r0 >= rows) continue;
              Bf16GemmTask split{c.type, w.data(), c.packed, rows, cols, r0, rows, as.data(), n, part.data(), rows};
              if (r0 > 0) {
                split.row_begin = 0, split.row_end = r0;
                bf16_gemm_amx(split);
                split.row_begin = r0, split.row_end = rows;
              }
              bf16_gemm_amx(split);
              ASSERT_EQ(0, std::memcmp(part.data(), got.data() + first * rows, part.size() * sizeof(float)))
                  << dtype_name(c.type) << " rows " << rows << " cols " << cols << " tokens " << first << "+" << n
                  << " split at " << r0;
            }
          }
      }
}

}  // namespace
}  // namespace ridge::cpu

namespace ridge::cpu {
namespace {

// Through matmul: a prefill input takes the bf16 path (after its prologue), the same input without
// the flag the int8 one, and a grouped call with both kinds of inputs gives each its own bits.
TEST(Bf16Gemm, MatmulRoutesPrefillInputsToTheTileGemm) {
  if (!amx_bf16_usable() || active_isa() != Isa::Avx512Vnni) GTEST_SKIP() << "this CPU has no AMX-BF16";
  const int64_t rows = 48, cols = 1088, n = 21;
  const auto w = random_matrix(DType::Q4_0, rows, cols, 9, true);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(n * cols));
  for (float& v : x) v = normal(rng);
  ThreadPool pool(2);
  MatmulScratch scratch;
  const ref::WeightMatrix m{DType::Q4_0, w.data(), rows, cols, true};
  MatmulPrologue prologue;
  prologue.kind = MatmulPrologue::Kind::None;
  std::vector<float> wide(size_t(n * rows)), narrow(wide.size()), want(wide.size());
  const MatmulJob wide_job{m, wide.data()}, narrow_job{m, narrow.data()};
  matmul(std::span(&wide_job, 1), x.data(), n, pool, scratch, Isa::Avx512Vnni, prologue, true);
  matmul(std::span(&narrow_job, 1), x.data(), n, pool, scratch, Isa::Avx512Vnni, prologue, false);
  const auto a = tiled(x, n, cols);
  bf16_gemm_reference({DType::Q4_0, w.data(), true, rows, cols, 0, rows, a.data(), n, want.data(), rows}, x.data());
  double max_diff = 0, max_int8 = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_diff = std::max(max_diff, double(std::fabs(wide[i] - want[i])));
    max_int8 = std::max(max_int8, double(std::fabs(narrow[i] - want[i])));
  }
  EXPECT_LT(max_diff, 1e-4);
  EXPECT_GT(max_int8, max_diff);  // the int8 path is another arithmetic: its results are not these
  // Grouped: tokens 0..9 as prompt positions, 10..20 as generated ones, in one call.
  std::vector<float> mixed(wide.size());
  const MatmulInput inputs[] = {{x.data(), 10, prologue, true}, {x.data() + 10 * cols, n - 10, prologue, false}};
  const GroupedMatmulJob jobs[] = {{{m, mixed.data()}, 0}, {{m, mixed.data() + 10 * rows}, 1}};
  matmul_grouped(inputs, jobs, pool, scratch, Isa::Avx512Vnni);
  EXPECT_EQ(0, std::memcmp(mixed.data(), wide.data(), size_t(10 * rows) * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(mixed.data() + 10 * rows, narrow.data() + 10 * rows, size_t((n - 10) * rows) * sizeof(float)));
}

}  // namespace
}  // namespace ridge::cpu
