// The CPU matmul against the reference, for every ISA this machine supports, over awkward shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {
namespace {

// Random blocks with finite, modest f16 scales (offsets 0 and 2 hold d / m or d / dmin in every type used here).
std::vector<uint8_t> random_weights(DType type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto& info = dtype_info(type);
  std::vector<uint8_t> bytes(size_t(rows * dtype_row_bytes(type, cols)));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (info.block_size == 1) {
    for (size_t i = 0; i < bytes.size() / size_t(info.block_bytes); ++i) {
      const float v = normal(rng) * 0.1f;
      if (type == DType::F32) std::memcpy(&bytes[i * 4], &v, 4);
      const uint16_t h = type == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
      if (type != DType::F32) std::memcpy(&bytes[i * 2], &h, 2);
    }
    return bytes;
  }
  for (auto& b : bytes) b = uint8_t(rng());
  // Where each block keeps its f16 scale: first, except Q6_K (last).
  const size_t d_offset = type == DType::Q6_K ? size_t(info.block_bytes) - 2 : 0;
  for (size_t off = 0; off < bytes.size(); off += size_t(info.block_bytes)) {
    const uint16_t d = f32_to_f16(0.01f + 0.02f * std::fabs(normal(rng)));
    const uint16_t m = f32_to_f16(-0.1f * std::fabs(normal(rng)));
    std::memcpy(&bytes[off + d_offset], &d, 2);
    if (type == DType::Q4_1 || type == DType::Q4_K || type == DType::Q5_K) std::memcpy(&bytes[off + 2], &m, 2);
  }
  return bytes;
}

std::vector<float> random_input(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  return x;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni})
    if (isa_supported(isa)) isas.push_back(isa);
  return isas;
}

struct Shape {
  int64_t rows, cols, tokens;
};

class CpuMatmul : public ::testing::TestWithParam<DType> {};

TEST_P(CpuMatmul, MatchesReferenceOnEveryIsaAndThreadCount) {
  const DType type = GetParam();
  const int64_t block = dtype_info(type).block_size;
  const std::vector<Shape> shapes = {{1, 256, 1}, {7, 256, 3}, {33, 512, 4}, {96, 768, 5}, {17, 4352, 9}, {64, 256, 67}};
  for (const Shape& s : shapes) {
    const int64_t cols = (s.cols + block - 1) / block * block;
    const auto w = random_weights(type, s.rows, cols, uint32_t(s.rows * 31 + cols));
    const auto x = random_input(s.tokens * cols, uint32_t(cols));
    const ref::WeightMatrix matrix{type, w.data(), s.rows, cols};
    std::vector<float> expect(size_t(s.tokens * s.rows));
    ref::matmul(matrix, x.data(), s.tokens, expect.data());
    // Scale of the error that int8 activations introduce: |w| · |x| per output.
    std::vector<float> wrow(static_cast<size_t>(cols));
    std::vector<double> magnitude(size_t(s.rows * s.tokens));
    for (int64_t r = 0; r < s.rows; ++r) {
      ref::dequantize_row(type, w.data() + r * dtype_row_bytes(type, cols), wrow.data(), cols);
      for (int64_t t = 0; t < s.tokens; ++t) {
        double m = 0;
        for (int64_t c = 0; c < cols; ++c) m += std::fabs(double(wrow[size_t(c)]) * x[size_t(t * cols + c)]);
        magnitude[size_t(t * s.rows + r)] = m;
      }
    }
    const double rel = quant_dot_supported(type) ? 2e-2 : 1e-5;  // int8 activations vs exact f32
    std::vector<float> scalar_result;
    for (Isa isa : supported_isas()) {
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        MatmulScratch scratch;
        std::vector<float> got(expect.size(), NAN);
        const MatmulJob job{matrix, got.data()};
        matmul(std::span(&job, 1), x.data(), s.tokens, pool, scratch, isa);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], expect[i], rel * magnitude[i] + 1e-5)
              << isa_name(isa) << " threads=" << threads << " shape " << s.rows << "x" << cols << "x" << s.tokens << " at " << i;
        // The SIMD kernels compute the same integer sums as the scalar one: only f32 rounding differs.
        if (isa == Isa::Scalar && threads == 1) scalar_result = got;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], scalar_result[i], 1e-5 * magnitude[i] + 1e-6) << isa_name(isa) << " vs scalar at " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CpuMatmul,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::F32, DType::F16, DType::BF16,
                                           DType::Q4_K, DType::Q6_K),
                         [](const auto& param_info) { return std::string(dtype_name(param_info.param)); });

TEST(CpuMatmul, SeveralJobsShareOneInput) {
  const int64_t cols = 320;
  const auto wa = random_weights(DType::Q4_1, 40, cols, 1), wb = random_weights(DType::Q8_0, 13, cols, 2);
  const auto x = random_input(3 * cols, 3);
  std::vector<float> ya(3 * 40), yb(3 * 13);
  ThreadPool pool(2);
  MatmulScratch scratch;
  const MatmulJob jobs[] = {{{DType::Q4_1, wa.data(), 40, cols}, ya.data()}, {{DType::Q8_0, wb.data(), 13, cols}, yb.data()}};
  matmul(jobs, x.data(), 3, pool, scratch);
  const auto together_a = ya, together_b = yb;
  std::fill(ya.begin(), ya.end(), 0.0f);
  std::fill(yb.begin(), yb.end(), 0.0f);
  matmul(std::span(&jobs[0], 1), x.data(), 3, pool, scratch);
  matmul(std::span(&jobs[1], 1), x.data(), 3, pool, scratch);
  EXPECT_EQ(ya, together_a);  // the same rows whether alone or beside another job
  EXPECT_EQ(yb, together_b);
}

TEST(ThreadPoolTest, SplitRangeCoversEverythingOnce) {
  for (int64_t n : {0, 1, 7, 64, 1000})
    for (int threads : {1, 2, 3, 5}) {
      std::vector<int> seen(size_t(n), 0);
      for (int i = 0; i < threads; ++i) {
        const Range r = split_range(n, 8, i, threads);
        for (int64_t k = r.begin; k < r.end; ++k) ++seen[size_t(k)];
      }
      for (int64_t k = 0; k < n; ++k) ASSERT_EQ(seen[size_t(k)], 1) << n << " " << threads;
    }
}

TEST(ThreadPoolTest, RunsEveryThreadOncePerRun) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(3);
  for (int round = 0; round < 200; ++round) pool.run([&](int i, int n) { hits[size_t(i)] += n; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 600);
}

}  // namespace
}  // namespace ridge::cpu

namespace ridge::cpu {
namespace {

// The packed layout: rows round-trip exactly, and the packed kernels agree with the unpacked ones
// (same integer sums; only f32 rounding and the Q4_0 offset's grouping differ) on shapes whose
// block count leaves every possible last group (1..4 blocks), for 1..9 tokens; and a token's
// result is bit-identical whatever else is in the batch.
TEST(PackedLayout, RoundTripsAndMatchesTheUnpackedKernels) {
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0}) {
    for (int64_t cols : {32, 64, 96, 128, 160, 576, 1536}) {
      const int64_t rows = 13;
      auto w = random_weights(type, rows, cols, uint32_t(cols));
      auto packed = w;
      pack_rows(type, packed.data(), rows, cols);
      const int64_t row_bytes = dtype_row_bytes(type, cols);
      std::vector<float> a(static_cast<size_t>(cols)), b(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        ref::dequantize_row(type, w.data() + r * row_bytes, a.data(), cols);
        dequantize_packed_row(type, packed.data() + r * row_bytes, b.data(), cols);
        ASSERT_EQ(a, b) << dtype_name(type) << " cols " << cols << " row " << r;
      }
      if (!isa_supported(Isa::Avx512Vnni)) continue;
      const int64_t max_tokens = 9;
      const auto x = random_input(max_tokens * cols, 5);
      ThreadPool pool(2);
      MatmulScratch scratch;
      std::vector<float> plain(size_t(max_tokens * rows)), fast(plain.size()), alone(static_cast<size_t>(rows));
      const MatmulJob plain_job{{type, w.data(), rows, cols}, plain.data()};
      const MatmulJob fast_job{{type, packed.data(), rows, cols, true}, fast.data()};
      matmul(std::span(&plain_job, 1), x.data(), max_tokens, pool, scratch, Isa::Avx512Vnni);
      matmul(std::span(&fast_job, 1), x.data(), max_tokens, pool, scratch, Isa::Avx512Vnni);
      for (size_t i = 0; i < plain.size(); ++i) {
        double magnitude = 0;
        for (int64_t c = 0; c < cols; ++c) magnitude += std::fabs(double(x[size_t(c)]));
        ASSERT_NEAR(fast[i], plain[i], 1e-5 * magnitude * 0.05 + 1e-4) << dtype_name(type) << " cols " << cols << " at " << i;
      }
      for (int64_t t = 0; t < max_tokens; ++t) {
        const MatmulJob one{{type, packed.data(), rows, cols, true}, alone.data()};
        matmul(std::span(&one, 1), x.data() + t * cols, 1, pool, scratch, Isa::Avx512Vnni);
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_EQ(alone[size_t(r)], fast[size_t(t * rows + r)]) << dtype_name(type) << " token " << t << " row " << r;
      }
      // Another ISA reads packed rows through the dequantizing f32 fallback: the reference's result.
      std::vector<float> fallback(plain.size()), exact(plain.size());
      const MatmulJob slow_job{{type, packed.data(), rows, cols, true}, fallback.data()};
      matmul(std::span(&slow_job, 1), x.data(), max_tokens, pool, scratch, Isa::Scalar);
      ref::matmul({type, w.data(), rows, cols}, x.data(), max_tokens, exact.data());
      for (size_t i = 0; i < plain.size(); ++i) ASSERT_NEAR(fallback[i], exact[i], 1e-4 * std::fabs(exact[i]) + 1e-4);
    }
  }
}

}  // namespace
}  // namespace ridge::cpu
