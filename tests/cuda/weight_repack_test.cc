// The device weight layout, checked on the host: every type's rows split into aligned sections
// dequantize exactly as the file's rows do, and rows the CPU packed for AVX-512 VNNI unpack to the
// file's bytes first.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backend/weight_repack.h"
#include "core/fp16.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/cuda/weight_layout.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/quantize.h"

namespace ridge {
namespace {

// rows x cols of `type` in GGUF layout: quantized from normal values, or random valid Q6_K blocks.
std::vector<uint8_t> random_rows(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  const int64_t row_bytes = dtype_row_bytes(type, cols);
  std::vector<uint8_t> out(size_t(rows * row_bytes));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (type == DType::Q6_K) {
    for (auto& b : out) b = uint8_t(rng());
    for (int64_t blk = 0; blk < rows * cols / 256; ++blk) {  // a finite f16 d in every block
      const uint16_t d = f32_to_f16(0.001f * float(1 + rng() % 100));
      std::memcpy(out.data() + blk * 210 + 208, &d, 2);
    }
    return out;
  }
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& x : row) x = normal(rng);
    ref::quantize_row(type, row.data(), out.data() + r * row_bytes, cols);
  }
  return out;
}

TEST(CudaWeightLayout, SectionsAreAlignedAndDisjoint) {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q6_K, DType::F32, DType::F16, DType::BF16}) {
    const int64_t rows = 37, cols = 512;
    const cuda::WeightSections s = cuda::weight_sections(t, rows, cols);
    EXPECT_EQ(s.bytes % cuda::kSectionAlign, 0);
    EXPECT_GE(s.bytes, dtype_row_bytes(t, cols) * rows) << dtype_name(t);  // nothing lost
    for (int64_t off : {s.qs, s.qh, s.scales, s.sub_scales}) EXPECT_EQ(off % cuda::kSectionAlign, 0);
  }
  EXPECT_FALSE(cuda::device_weight_type(DType::Q4_K));
  EXPECT_FALSE(cuda::device_weight_type(DType::Q5_0));
}

TEST(CudaWeightLayout, RepackedRowsDequantizeAsTheFileRows) {
  std::mt19937 rng(11);
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q6_K, DType::F32, DType::F16, DType::BF16}) {
    for (int64_t cols : {256, 576, 1536}) {
      if (t == DType::Q6_K && cols % 256 != 0) continue;
      const int64_t rows = 13;
      const std::vector<uint8_t> file = random_rows(t, rows, cols, rng);
      std::vector<uint8_t> dev(size_t(cuda::weight_sections(t, rows, cols).bytes));
      repack_for_device(t, file.data(), false, rows, cols, dev.data());
      std::vector<float> want(static_cast<size_t>(cols)), got(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        ref::dequantize_row(t, file.data() + r * dtype_row_bytes(t, cols), want.data(), cols);
        dequantize_device_row(t, dev.data(), rows, cols, r, got.data());
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << dtype_name(t) << " cols " << cols << " row " << r;
      }
    }
  }
}

TEST(CudaWeightLayout, CpuPackedRowsUnpackToTheFileBytes) {
  std::mt19937 rng(5);
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q8_0}) {
    for (int64_t cols : {32, 96, 576, 4096}) {
      const int64_t rows = 21;  // a full tile of 16 rows and a partial one
      const std::vector<uint8_t> file = random_rows(t, rows, cols, rng);
      std::vector<uint8_t> packed = file;
      cpu::pack_rows(t, packed.data(), rows, cols);
      const int64_t row_bytes = dtype_row_bytes(t, cols);
      std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
      for (int64_t r = 0; r < rows; ++r) {
        cpu::unpack_row(t, packed.data(), rows, cols, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), file.data() + r * row_bytes, size_t(row_bytes))) << dtype_name(t) << " " << cols;
      }
      std::vector<uint8_t> a(size_t(cuda::weight_sections(t, rows, cols).bytes)), b(a.size());
      repack_for_device(t, file.data(), false, rows, cols, a.data());
      repack_for_device(t, packed.data(), true, rows, cols, b.data());
      EXPECT_EQ(a, b) << dtype_name(t) << " " << cols;
    }
  }
}

}  // namespace
}  // namespace ridge
