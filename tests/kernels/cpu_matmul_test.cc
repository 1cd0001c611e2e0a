// The CPU matmul against the reference, for every ISA this machine supports, over awkward shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/int8_group.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"

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
      if (type == DType::F8_E4M3) {
        bytes[i] = f32_to_fp8_e4m3(v * 40.0f);  // the range FP8 checkpoints use (their scales bring it back)
        continue;
      }
      if (type == DType::F32) std::memcpy(&bytes[i * 4], &v, 4);
      const uint16_t h = type == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
      if (type != DType::F32) std::memcpy(&bytes[i * 2], &h, 2);
    }
    return bytes;
  }
  for (auto& b : bytes) b = uint8_t(rng());
  if (type == DType::MXFP4 || type == DType::NVFP4) {  // scales of weights near 0.01-0.1
    for (size_t off = 0; off < bytes.size(); off += size_t(info.block_bytes)) {
      if (type == DType::MXFP4) bytes[off] = uint8_t(116 + rng() % 6);
      else
        for (int s = 0; s < 4; ++s) bytes[off + size_t(s)] = uint8_t(rng() % 0x60);  // exponents 0..11, subnormals too
    }
    return bytes;
  }
  // Where each block keeps its f16 scale: first, except Q6_K and TQ2_0 (last).
  const size_t d_offset =
      type == DType::Q6_K || type == DType::TQ2_0 || type == DType::Q3_K || type == DType::TQ1_0 ? size_t(info.block_bytes) - 2
                                                                                                : 0;
  for (size_t off = 0; off < bytes.size(); off += size_t(info.block_bytes)) {
    const uint16_t d = f32_to_f16(0.01f + 0.02f * std::fabs(normal(rng)));
    if (type == DType::Q2_K) {  // d and dmin last
      const uint16_t dmin = f32_to_f16(0.01f * std::fabs(normal(rng)));
      std::memcpy(&bytes[off + 80], &d, 2);
      std::memcpy(&bytes[off + 82], &dmin, 2);
      continue;
    }
    const uint16_t m = f32_to_f16(-0.1f * std::fabs(normal(rng)));
    std::memcpy(&bytes[off + d_offset], &d, 2);
    if (type == DType::IQ1_M)  // its d sits in the top nibbles of its four u16 scales
      for (int w = 0; w < 4; ++w) bytes[off + 49 + 2 * size_t(w)] = uint8_t((bytes[off + 49 + 2 * size_t(w)] & 0x0f) | ((d >> (4 * w)) & 0x0f) << 4);
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
  const std::vector<Shape> shapes = {{1, 256, 1}, {40, 512, 2}, {7, 256, 3}, {33, 512, 4}, {96, 768, 5}, {17, 4352, 9}, {64, 256, 67}};
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
        // BF16 weights on AVX-512 BF16 CPUs: activations rounded to bf16 (relative 2^-9 per term).
        const bool bf16_inputs = type == DType::BF16 && isa == Isa::Avx512Vnni && bf16_dot_usable();
        const double tol = bf16_inputs ? 4e-3 : rel;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], expect[i], tol * magnitude[i] + 1e-5)
              << isa_name(isa) << " threads=" << threads << " shape " << s.rows << "x" << cols << "x" << s.tokens << " at " << i;
        // Every token's result is the same bits alone as in the batch.
        std::vector<float> alone(static_cast<size_t>(s.rows));
        const MatmulJob one{matrix, alone.data()};
        for (int64_t t = 0; t < s.tokens; ++t) {
          matmul(std::span(&one, 1), x.data() + t * cols, 1, pool, scratch, isa);
          for (int64_t r = 0; r < s.rows; ++r)
            ASSERT_EQ(alone[size_t(r)], got[size_t(t * s.rows + r)])
                << isa_name(isa) << " token " << t << " row " << r << " alone vs batched";
        }
        // The SIMD kernels compute the same integer sums as the scalar one: only f32 rounding differs.
        if (isa == Isa::Scalar && threads == 1) scalar_result = got;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], scalar_result[i], (bf16_inputs ? 4e-3 : 1e-5) * magnitude[i] + 1e-6)
              << isa_name(isa) << " vs scalar at " << i;
        // The K quants and FP4 types have one arithmetic for every kernel (quant_dot_scalar.cc): the same bits.
        if (type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K || type == DType::MXFP4 || type == DType::NVFP4 ||
            type == DType::IQ4_NL || type == DType::IQ4_XS || type == DType::TQ2_0 || type == DType::Q2_K || int8_group_type(type)) {
          for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], scalar_result[i]) << isa_name(isa) << " vs scalar at " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CpuMatmul,
                         ::testing::Values(DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::F32, DType::F16, DType::BF16,
                                           DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4, DType::NVFP4, DType::F8_E4M3,
                                           DType::IQ4_NL, DType::IQ4_XS, DType::TQ2_0, DType::IQ2_XXS, DType::IQ2_XS,
                                           DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M, DType::Q3_K, DType::TQ1_0, DType::Q2_K),
                         [](const auto& param_info) { return std::string(dtype_name(param_info.param)); });

// FP8 weights with the scales of their checkpoints (per channel; per 128-value block): every ISA
// against the reference, and a token's bits the same alone as in a batch.
TEST(CpuMatmul, Fp8GroupScalesMatchTheReference) {
  const int64_t rows = 19, cols = 384, tokens = 5;
  const auto w = random_weights(DType::F8_E4M3, rows, cols, 9);
  const auto x = random_input(tokens * cols, 4);
  for (const int64_t group : {cols, int64_t(128), int64_t(16)}) {
    std::vector<float> scales(size_t(rows * cols / group));
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = 0.001f * float(1 + i % 7);
    ref::WeightMatrix m{DType::F8_E4M3, w.data(), rows, cols};
    m.group_scales = scales.data();
    m.group_cols = group;
    std::vector<float> expect(size_t(tokens * rows));
    ref::matmul(m, x.data(), tokens, expect.data());
    for (Isa isa : supported_isas()) {
      ThreadPool pool(2);
      MatmulScratch scratch;
      std::vector<float> got(expect.size()), alone(static_cast<size_t>(rows));
      const MatmulJob job{m, got.data()}, one{m, alone.data()};
      matmul(std::span(&job, 1), x.data(), tokens, pool, scratch, isa);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], expect[i], 1e-5 * std::fabs(expect[i]) + 1e-5) << isa_name(isa) << " group " << group << " at " << i;
      for (int64_t t = 0; t < tokens; ++t) {
        matmul(std::span(&one, 1), x.data() + t * cols, 1, pool, scratch, isa);
        for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(alone[size_t(r)], got[size_t(t * rows + r)]) << isa_name(isa);
      }
    }
  }
}

// A fused prologue gives the bits of running the element-wise op first, whether the kernels read
// quantized rows made from a row buffer (Q4_1, packed Q8_0) or the f32 rows it writes out (F16).
TEST(CpuMatmul, FusedProloguesMatchTheSeparateOps) {
  const int64_t cols = 256, rows = 24, n = 5;
  const auto x = random_input(n * cols, 21), up = random_input(n * cols, 22), norm = random_input(cols, 23);
  for (DType type : {DType::Q4_1, DType::Q8_0, DType::F16}) {
    auto w = random_weights(type, rows, cols, 9);
    const bool packed = type == DType::Q8_0 && isa_supported(Isa::Avx512Vnni);
    if (packed) pack_rows(type, w.data(), rows, cols);
    const ref::WeightMatrix matrix{type, w.data(), rows, cols, packed};
    ThreadPool pool(2);
    MatmulScratch scratch;
    for (int kind : {1, 2}) {
      std::vector<float> separate_in(x), fused(size_t(n * rows)), separate(fused.size());
      MatmulPrologue prologue;
      if (kind == 1) {
        prologue = {MatmulPrologue::Kind::RmsNorm, norm.data(), 1e-5f, nullptr};
        ref::rms_norm(x.data(), norm.data(), n, cols, 1e-5f, separate_in.data());
      } else {
        prologue = {MatmulPrologue::Kind::SwiGlu, nullptr, 0.0f, up.data()};
        swiglu(separate_in.data(), up.data(), n * cols);
      }
      const MatmulJob a{matrix, fused.data()}, b{matrix, separate.data()};
      matmul(std::span(&a, 1), x.data(), n, pool, scratch, active_isa(), prologue);
      matmul(std::span(&b, 1), separate_in.data(), n, pool, scratch, active_isa());
      ASSERT_EQ(fused, separate) << dtype_name(type) << (kind == 1 ? " rms_norm" : " swiglu");
    }
  }
}

// A grouped matmul (several inputs, each with its own jobs and prologue, as a MoE layer's experts)
// gives every job the bits of calling matmul on its input alone: packed, quantized and float
// kernels, inputs of 1, 17 (AMX's tile) and 3 tokens, one empty, with and without a GeGLU prologue.
TEST(CpuMatmul, GroupedInputsGiveTheBitsOfSeparateCalls) {
  const int64_t cols = 256;
  const std::vector<int64_t> tokens = {1, 17, 0, 3};
  for (DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::F16}) {
    ThreadPool pool(2);
    MatmulScratch scratch;
    std::vector<std::vector<uint8_t>> weights;
    std::vector<std::vector<float>> xs, ups, grouped_y, alone_y;
    std::vector<MatmulInput> inputs;
    std::vector<GroupedMatmulJob> jobs;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const int64_t rows = 24 + 8 * int64_t(i), n = tokens[i];
      auto& w = weights.emplace_back(random_weights(type, rows, cols, 40 + uint32_t(i)));
      const bool packed = packable(type) && isa_supported(Isa::Avx512Vnni);
      if (packed) pack_rows(type, w.data(), rows, cols);
      xs.push_back(random_input(std::max<int64_t>(n, 1) * cols, 50 + uint32_t(i)));
      ups.push_back(random_input(std::max<int64_t>(n, 1) * cols, 60 + uint32_t(i)));
      grouped_y.emplace_back(size_t(std::max<int64_t>(n, 1) * rows), 0.0f);
      alone_y.emplace_back(grouped_y.back().size(), 0.0f);
      MatmulPrologue prologue;
      if (i % 2 == 1) prologue = {MatmulPrologue::Kind::GeGlu, nullptr, 0.0f, ups.back().data()};
      inputs.push_back({xs.back().data(), n, prologue});
      const ref::WeightMatrix matrix{type, w.data(), rows, cols, packed};
      jobs.push_back({{matrix, grouped_y.back().data()}, int32_t(i)});
    }
    matmul_grouped(inputs, jobs, pool, scratch);
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] == 0) continue;
      const MatmulJob alone{jobs[i].job.w, alone_y[i].data()};
      matmul(std::span(&alone, 1), xs[i].data(), tokens[i], pool, scratch, active_isa(), inputs[i].prologue);
      ASSERT_EQ(grouped_y[i], alone_y[i]) << dtype_name(type) << " input " << i;
    }
  }
}

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

// The AVX2 and AVX-512 activation quantizers give the scalar one's bits: ordinary values, all-zero blocks,
// values that land exactly on a rounding tie (x * 127 / amax = k + 0.5), and large magnitudes.
TEST(ActQuant, WideQuantizerMatchesTheScalarOneBitForBit) {
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  auto x = random_input(32 * 200, 11);
  for (int i = 0; i < 32; ++i) x[size_t(32 + i)] = 0.0f;
  for (int i = 0; i < 32; ++i) x[size_t(64 + i)] = float(i % 8) * 0.5f - 1.75f + (i == 0 ? 127.0f - 1.75f : 0.0f);
  for (int i = 0; i < 32; ++i) x[size_t(96 + i)] *= 1e30f;
  x[128] = 254.0f;  // amax 254: x * 127 / 254 = x / 2, so odd integers tie
  for (int i = 1; i < 32; ++i) x[size_t(128 + i)] = float(2 * i - 31);
  std::vector<ActBlock> a(200), b(200);
  quantize_activations_scalar(x.data(), int64_t(x.size()), a.data());
  using Quantizer = void (*)(const float*, int64_t, ActBlock*);
  std::vector<std::pair<const char*, Quantizer>> wide{{"avx2", quantize_activations_avx2}};
  if (isa_supported(Isa::Avx512Vnni)) wide.push_back({"avx512", quantize_activations_avx512});
  for (const auto& [name, quantize] : wide) {
    quantize(x.data(), int64_t(x.size()), b.data());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(a[i].q, b[i].q, 32)) << name << " block " << i;
      ASSERT_EQ(a[i].d, b[i].d) << name << " block " << i;
      ASSERT_EQ(a[i].s, b[i].s) << name << " block " << i;
      ASSERT_EQ(a[i].sum, b[i].sum) << name << " block " << i;
    }
  }
}

// The packed layout: rows round-trip exactly; every packed kernel (VNNI, AMX, and the scalar
// reference other CPUs use) computes the same bits as the naive reference of packed_layout.h's
// arithmetic, for full and partial tiles of rows and any number of tokens; a token's result is
// bit-identical whatever else is in the batch; and the results agree with the unpacked kernels up
// to f32 rounding.
TEST(PackedLayout, EveryKernelMatchesTheReferenceBitForBit) {
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::MXFP4, DType::NVFP4}) {
    for (int64_t cols : {32, 64, 96, 160, 576, 1536}) {
      if (cols % dtype_info(type).block_size != 0) continue;  // NVFP4: 64-value blocks
      const int64_t rows = 37;  // two full tiles of 16 rows and a partial one
      auto w = random_weights(type, rows, cols, uint32_t(cols));
      auto packed = w;
      pack_rows(type, packed.data(), rows, cols);
      const int64_t row_bytes = dtype_row_bytes(type, cols);
      std::vector<float> a(static_cast<size_t>(cols)), b(static_cast<size_t>(cols));
      std::vector<uint8_t> gguf_row(static_cast<size_t>(row_bytes));
      for (int64_t r = 0; r < rows; ++r) {
        ref::dequantize_row(type, w.data() + r * row_bytes, a.data(), cols);
        dequantize_packed_row(type, packed.data(), rows, cols, r, b.data());
        ASSERT_EQ(a, b) << dtype_name(type) << " cols " << cols << " row " << r;
        unpack_row(type, packed.data(), rows, cols, r, gguf_row.data());
        ASSERT_EQ(0, std::memcmp(gguf_row.data(), w.data() + r * row_bytes, size_t(row_bytes)));
      }
      const int64_t n_tokens = 41, n_blocks = cols / kActBlock;  // two tiles of 16 tokens and 9 more
      const auto x = random_input(n_tokens * cols, 5);
      std::vector<ActBlock> acts(static_cast<size_t>(n_tokens * n_blocks));
      for (int64_t t = 0; t < n_tokens; ++t) quantize_activations(x.data() + t * cols, cols, acts.data() + t * n_blocks);
      std::vector<float> expected(size_t(n_tokens * rows));
      const PackedDotTask all{type, packed.data(), rows, n_blocks, 0, rows, acts.data(), n_tokens, expected.data(), rows};
      packed_dot_scalar(all);

      using Kernel = void (*)(const PackedDotTask&);
      std::vector<std::pair<const char*, Kernel>> kernels;
      if (isa_supported(Isa::Avx2)) kernels.push_back({"avx2", packed_dot_avx2});
      if (isa_supported(Isa::AvxVnni)) kernels.push_back({"avxvnni", packed_dot_avxvnni});
      if (isa_supported(Isa::Avx512Vnni)) kernels.push_back({"vnni", packed_dot_avx512vnni});
      if (isa_supported(Isa::Avx512Vnni) && amx_usable()) kernels.push_back({"amx", packed_dot_amx});
      for (const auto& [name, kernel] : kernels) {
        std::vector<float> got(expected.size());
        for (int64_t first = 0; first < rows; first += 16) {  // one tile per call, as threads split them
          PackedDotTask task = all;
          task.row_begin = first;
          task.row_end = std::min(rows, first + 16);
          task.y = got.data();
          kernel(task);
        }
        ASSERT_EQ(got, expected) << name << " " << dtype_name(type) << " cols " << cols;
        for (int64_t t0 : {int64_t(0), int64_t(7), int64_t(16)})
          for (int64_t n = 1; n <= 25; ++n) {  // every pass size 1..12 and their balanced splits
            if (t0 + n > n_tokens) continue;
            std::vector<float> part(size_t(n * rows));
            PackedDotTask task = all;
            task.acts += t0 * n_blocks;
            task.n_tokens = n;
            task.y = part.data();
            kernel(task);
            ASSERT_EQ(0, std::memcmp(part.data(), expected.data() + t0 * rows, part.size() * sizeof(float)))
                << name << " " << dtype_name(type) << " tokens " << t0 << "+" << n;
          }
      }

      // Through matmul: every ISA gives the reference's bits; the unpacked kernels agree up to rounding.
      ThreadPool pool(2);
      MatmulScratch scratch;
      for (Isa isa : supported_isas()) {
        std::vector<float> fast(expected.size()), plain(expected.size());
        const MatmulJob fast_job{{type, packed.data(), rows, cols, true}, fast.data()};
        matmul(std::span(&fast_job, 1), x.data(), n_tokens, pool, scratch, isa);
        ASSERT_EQ(fast, expected) << "matmul on " << isa_name(isa);
        const MatmulJob plain_job{{type, w.data(), rows, cols}, plain.data()};
        matmul(std::span(&plain_job, 1), x.data(), n_tokens, pool, scratch, isa);
        double magnitude = 0;
        for (int64_t c = 0; c < cols; ++c) magnitude += std::fabs(double(x[size_t(c)]));
        for (size_t i = 0; i < plain.size(); ++i)
          ASSERT_NEAR(fast[i], plain[i], 1e-5 * magnitude * 0.05 + 1e-4 + 1e-6 * std::fabs(plain[i])) << dtype_name(type) << " cols " << cols << " at " << i;
      }
    }
  }
}

// The K-quants' packed layouts (packed_q4k.h, packed_q6k.h): rows round-trip exactly; the VNNI
// kernel, the scalar reference and matmul give the unpacked K-quant kernels' bits for full and
// partial tiles, every pass size (1..12 tokens and their balanced splits) and tokens taken out of
// any batch.
class PackedKQuant : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(PackedLayout, PackedKQuant, ::testing::Values(DType::Q4_K, DType::Q5_K, DType::Q6_K),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST_P(PackedKQuant, GivesTheBitsOfTheUnpackedKernels) {
  const DType type = GetParam();
  for (int64_t cols : {256, 512, 1536, 2304}) {
    const int64_t rows = 37;
    auto w = random_weights(type, rows, cols, uint32_t(cols + 7));
    auto packed = w;
    pack_rows(type, packed.data(), rows, cols);
    const int64_t row_bytes = dtype_row_bytes(type, cols);
    std::vector<uint8_t> gguf_row(static_cast<size_t>(row_bytes));
    std::vector<float> a(static_cast<size_t>(cols)), b(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      unpack_row(type, packed.data(), rows, cols, r, gguf_row.data());
      ASSERT_EQ(0, std::memcmp(gguf_row.data(), w.data() + r * row_bytes, size_t(row_bytes))) << "cols " << cols << " row " << r;
      ref::dequantize_row(type, w.data() + r * row_bytes, a.data(), cols);
      dequantize_packed_row(type, packed.data(), rows, cols, r, b.data());
      ASSERT_EQ(a, b);
    }
    const int64_t n_tokens = 41, n_blocks = cols / kActBlock;
    const auto x = random_input(n_tokens * cols, 11);
    std::vector<ActBlock> acts(static_cast<size_t>(n_tokens * n_blocks));
    for (int64_t t = 0; t < n_tokens; ++t) quantize_activations(x.data() + t * cols, cols, acts.data() + t * n_blocks);
    std::vector<float> expected(size_t(n_tokens * rows));
    quant_dot_scalar({type, w.data(), row_bytes, n_blocks, 0, rows, acts.data(), n_tokens, expected.data(), rows});
    const PackedDotTask all{type, packed.data(), rows, n_blocks, 0, rows, acts.data(), n_tokens, nullptr, rows};
    using Kernel = void (*)(const PackedDotTask&);
    std::vector<std::pair<const char*, Kernel>> kernels{{"scalar", packed_dot_scalar}};
    if (isa_supported(Isa::Avx2)) kernels.push_back({"avx2", packed_dot_avx2});
    if (isa_supported(Isa::AvxVnni)) kernels.push_back({"avxvnni", packed_dot_avxvnni});
    if (isa_supported(Isa::Avx512Vnni)) kernels.push_back({"vnni", packed_dot_avx512vnni});
    if (isa_supported(Isa::Avx512Vnni) && amx_usable()) kernels.push_back({"amx", packed_dot_amx});
    for (const auto& [name, kernel] : kernels) {
      std::vector<float> got(expected.size());
      PackedDotTask task = all;
      task.y = got.data();
      kernel(task);
      ASSERT_EQ(got, expected) << name << " cols " << cols;
      for (int64_t n = 1; n <= 25; ++n)
        for (int64_t t0 : {int64_t(0), int64_t(41) - n}) {
          std::vector<float> part(size_t(n * rows));
          PackedDotTask some = all;
          some.acts += t0 * n_blocks;
          some.n_tokens = n;
          some.row_begin = 16;  // the second full tile and the partial one
          some.y = part.data();
          kernel(some);
          for (int64_t t = 0; t < n; ++t)
            ASSERT_EQ(0, std::memcmp(part.data() + t * rows + 16, expected.data() + (t0 + t) * rows + 16, (rows - 16) * sizeof(float)))
                << name << " tokens " << t0 << "+" << n;
        }
    }
    ThreadPool pool(2);
    MatmulScratch scratch;
    for (Isa isa : supported_isas()) {
      std::vector<float> fast(expected.size()), plain(expected.size());
      const MatmulJob fast_job{{type, packed.data(), rows, cols, true}, fast.data()};
      matmul(std::span(&fast_job, 1), x.data(), n_tokens, pool, scratch, isa);
      const MatmulJob plain_job{{type, w.data(), rows, cols}, plain.data()};
      matmul(std::span(&plain_job, 1), x.data(), n_tokens, pool, scratch, isa);
      ASSERT_EQ(fast, expected) << "packed matmul on " << isa_name(isa);
      ASSERT_EQ(plain, expected) << "matmul on " << isa_name(isa);
    }
  }
}

}  // namespace
}  // namespace ridge::cpu
