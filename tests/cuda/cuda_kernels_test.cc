// Every CUDA kernel but attention against the CPU reference, on awkward shapes. Skipped (not
// passed) on machines without a CUDA device.
#include <cmath>
#include <cstring>
#include <random>

#include "backend/weight_repack.h"
#include "core/fp16.h"
#include "cuda_test_util.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/quantize.h"
#include "kernels/ref/rope.h"
#include "backend/rope_table.h"

namespace ridge::cuda {
namespace {

using test::all_near;
using test::from_device;
using test::to_device;

std::vector<float> normal_values(size_t n, std::mt19937& rng, float stddev = 1.0f) {
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// A (rows, cols) matrix of `type` in GGUF layout and in the device layout.
struct TestMatrix {
  DType type;
  int64_t rows, cols;
  std::vector<uint8_t> file;
  DeviceBuffer dev;
  DeviceMatrix m() const { return {type, dev.as<uint8_t>(), rows, cols}; }
  std::vector<float> row(int64_t r) const {
    std::vector<float> out(static_cast<size_t>(cols));
    ref::dequantize_row(type, file.data() + r * dtype_row_bytes(type, cols), out.data(), cols);
    return out;
  }
};

TestMatrix make_matrix(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  TestMatrix t{type, rows, cols, std::vector<uint8_t>(size_t(rows * dtype_row_bytes(type, cols))), {}};
  if (type == DType::Q6_K) {
    for (auto& b : t.file) b = uint8_t(rng());
    for (int64_t blk = 0; blk < rows * cols / 256; ++blk) {
      const uint16_t d = f32_to_f16(0.0005f * float(1 + rng() % 50));
      std::memcpy(t.file.data() + blk * 210 + 208, &d, 2);
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float> row = normal_values(size_t(cols), rng, 0.05f);
      ref::quantize_row(type, row.data(), t.file.data() + r * dtype_row_bytes(type, cols), cols);
    }
  }
  std::vector<uint8_t> dev(size_t(weight_sections(type, rows, cols).bytes));
  repack_for_device(type, t.file.data(), false, rows, cols, dev.data());
  t.dev = to_device(dev);
  return t;
}

TEST(CudaKernels, QuantizedActivationsAreTheCpusBitForBit) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(1);
  const int64_t n_tokens = 3, cols = 576;
  std::vector<float> x = normal_values(size_t(n_tokens * cols), rng, 3.0f);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block
  const DeviceBuffer dx = to_device(x);
  DeviceBuffer q(n_tokens * cols), meta(n_tokens * cols / 32 * 16);
  quantize_activations(dx.as<float>(), n_tokens, cols, {q.as<int8_t>(), meta.as<float>()}, nullptr);
  const auto got_q = from_device<int8_t>(q.get(), size_t(n_tokens * cols));
  const auto got_meta = from_device<float>(meta.get(), size_t(n_tokens * cols / 32 * 4));
  std::vector<cpu::ActBlock> want(size_t(n_tokens * cols / 32));
  for (int64_t t = 0; t < n_tokens; ++t) cpu::quantize_activations(x.data() + t * cols, cols, want.data() + t * cols / 32);
  for (size_t b = 0; b < want.size(); ++b) {
    ASSERT_EQ(0, std::memcmp(want[b].q, got_q.data() + b * 32, 32)) << "block " << b;
    EXPECT_EQ(want[b].d, got_meta[b * 4]) << b;
    EXPECT_EQ(want[b].s, got_meta[b * 4 + 1]) << b;
    int sum = 0;
    for (int8_t v : want[b].q) sum += v;
    EXPECT_EQ(float(sum), got_meta[b * 4 + 2]) << b;
  }
}

TEST(CudaKernels, GemvMatchesTheCpuKernelsForEveryTypeAndTokenCount) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(2);
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q6_K, DType::F32, DType::F16, DType::BF16}) {
    for (int64_t cols : {256, 576, 1536}) {
      if (type == DType::Q6_K && cols % 256 != 0) continue;
      // Three matrices of odd heights in one launch, as Q, K and V.
      std::vector<TestMatrix> mats;
      for (int64_t rows : {37, 5, 64}) mats.push_back(make_matrix(type, rows, cols, rng));
      for (int64_t n : {1, 2, 3, 5, 8}) {
        const std::vector<float> x = normal_values(size_t(n * cols), rng);
        const DeviceBuffer dx = to_device(x);
        DeviceBuffer q(n * cols), meta(n * cols / 32 * 16);
        const ActBlocks acts{q.as<int8_t>(), meta.as<float>()};
        quantize_activations(dx.as<float>(), n, cols, acts, nullptr);
        std::vector<cpu::ActBlock> host_acts(size_t(n * cols / 32));
        for (int64_t t = 0; t < n; ++t) cpu::quantize_activations(x.data() + t * cols, cols, host_acts.data() + t * cols / 32);
        for (bool accumulate : {false, true}) {
          GemvArgs a;
          a.n_out = 3;
          std::vector<DeviceBuffer> ys;
          std::vector<std::vector<float>> y0;
          for (int i = 0; i < 3; ++i) {
            y0.push_back(normal_values(size_t(n * mats[size_t(i)].rows), rng));
            ys.push_back(to_device(y0.back()));
            a.out[i] = {mats[size_t(i)].m(), ys.back().as<float>()};
          }
          a.x = dx.as<float>();
          a.acts = acts;
          a.n_tokens = n;
          a.accumulate = accumulate;
          gemv(a, nullptr);
          for (int i = 0; i < 3; ++i) {
            const TestMatrix& w = mats[size_t(i)];
            std::vector<float> want(size_t(n * w.rows));
            if (gemv_quantized(type)) {  // the CPU's integer kernel: same block terms, another summation order
              cpu::quant_dot_scalar({type, w.file.data(), dtype_row_bytes(type, cols), cols / 32, 0, w.rows, host_acts.data(),
                                     n, want.data(), w.rows});
            } else {
              for (int64_t r = 0; r < w.rows; ++r) {
                const std::vector<float> row = w.row(r);
                for (int64_t t = 0; t < n; ++t) {
                  double s = 0;
                  for (int64_t c = 0; c < cols; ++c) s += double(row[size_t(c)]) * x[size_t(t * cols + c)];
                  want[size_t(t * w.rows + r)] = float(s);
                }
              }
            }
            if (accumulate)
              for (size_t j = 0; j < want.size(); ++j) want[j] += y0[size_t(i)][j];
            const auto got = from_device<float>(ys[size_t(i)].get(), want.size());
            ASSERT_TRUE(all_near(got, want, 2e-5f, 2e-4f))
                << dtype_name(type) << " cols " << cols << " tokens " << n << " matrix " << i << " accumulate " << accumulate;
          }
        }
      }
    }
  }
}

TEST(CudaKernels, DequantizedRowsAreTheReferenceBitForBit) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(3);
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q6_K, DType::F32, DType::F16, DType::BF16}) {
    const TestMatrix w = make_matrix(type, 19, 512, rng);
    const std::vector<int32_t> ids = {5, 0, 18, 5};
    const DeviceBuffer did = to_device(ids);
    DeviceBuffer out(int64_t(ids.size()) * 512 * 4), bf(19 * 512 * 2);
    dequantize_rows(w.m(), did.as<int32_t>(), int64_t(ids.size()), out.as<float>(), nullptr);
    dequantize_to_bf16(w.m(), bf.as<uint16_t>(), nullptr);
    const auto got = from_device<float>(out.get(), ids.size() * 512);
    const auto got_bf = from_device<uint16_t>(bf.get(), 19 * 512);
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::vector<float> want = w.row(ids[i]);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data() + i * 512, 512 * 4)) << dtype_name(type) << " row " << ids[i];
    }
    for (int64_t r = 0; r < 19; ++r) {
      const std::vector<float> want = w.row(r);
      for (int64_t c = 0; c < 512; ++c) ASSERT_EQ(ridge::f32_to_bf16(want[size_t(c)]), got_bf[size_t(r * 512 + c)]) << dtype_name(type);
    }
  }
}

TEST(CudaKernels, NormRopeSwigluAddsAndArgmaxMatchTheReference) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(4);
  const int64_t rows = 7, n = 576;
  const std::vector<float> x = normal_values(size_t(rows * n), rng, 2.0f), w = normal_values(size_t(n), rng);
  const DeviceBuffer dx = to_device(x), dw = to_device(w);
  {  // RMSNorm, all rows and gathered rows
    DeviceBuffer out(rows * n * 4);
    rms_norm(dx.as<float>(), nullptr, dw.as<float>(), rows, n, 1e-5f, out.as<float>(), nullptr);
    std::vector<float> want(x.size());
    ref::rms_norm(x.data(), w.data(), rows, n, 1e-5f, want.data());
    EXPECT_TRUE(all_near(from_device<float>(out.get(), want.size()), want, 0, 1e-6f));
    const std::vector<int32_t> pick = {6, 2};
    const DeviceBuffer dpick = to_device(pick);
    rms_norm(dx.as<float>(), dpick.as<int32_t>(), dw.as<float>(), 2, n, 1e-5f, out.as<float>(), nullptr);
    const auto got = from_device<float>(out.get(), size_t(2 * n));
    EXPECT_TRUE(all_near(std::vector<float>(got.begin(), got.begin() + n), std::vector<float>(want.begin() + 6 * n, want.end()), 0, 1e-6f));
  }
  {  // RoPE, normal and NeoX, from the host table: the reference bit for bit
    for (bool neox : {false, true}) {
      const int64_t heads = 3, dim = 64, tokens = 4;
      const ref::RopeArgs args{heads, dim, dim, neox, std::pow(100000.0f, -2.0f / 64.0f), nullptr};
      const std::vector<float> table = rope_cos_sin_table(args, 512);
      const DeviceBuffer dtable = to_device(table);
      const std::vector<int32_t> pos = {0, 3, 300, 511};
      const DeviceBuffer dpos = to_device(pos);
      std::vector<float> v = normal_values(size_t(tokens * heads * dim), rng);
      DeviceBuffer dv = to_device(v);
      rope({dtable.as<float>(), 512, dim, dim, neox}, dpos.as<int32_t>(), tokens, heads, dv.as<float>(), nullptr);
      ref::rope(args, pos.data(), tokens, v.data());
      const auto got = from_device<float>(dv.get(), v.size());
      EXPECT_EQ(0, std::memcmp(got.data(), v.data(), v.size() * 4)) << "neox " << neox;
    }
  }
  {  // SwiGLU, add, bias
    std::vector<float> g = normal_values(1000, rng, 3.0f);
    const std::vector<float> u = normal_values(1000, rng);
    DeviceBuffer dg = to_device(g);
    const DeviceBuffer du = to_device(u);
    swiglu(dg.as<float>(), du.as<float>(), 1000, nullptr);
    ref::swiglu(g.data(), u.data(), 1000);
    EXPECT_TRUE(all_near(from_device<float>(dg.get(), 1000), g, 1e-7f, 2e-6f));
    std::vector<float> a = normal_values(1000, rng);
    DeviceBuffer da = to_device(a);
    add(da.as<float>(), du.as<float>(), 1000, nullptr);
    for (size_t i = 0; i < a.size(); ++i) a[i] += u[i];
    EXPECT_EQ(from_device<float>(da.get(), 1000), a);
    const std::vector<float> bias = normal_values(100, rng);
    const DeviceBuffer db = to_device(bias);
    add_bias(da.as<float>(), db.as<float>(), 10, 100, nullptr);
    for (size_t i = 0; i < a.size(); ++i) a[i] += bias[i % 100];
    EXPECT_EQ(from_device<float>(da.get(), 1000), a);
  }
  {  // argmax: the first maximum of each row, NaN never chosen
    const int64_t vocab = 49152;
    std::vector<float> logits = normal_values(size_t(3 * vocab), rng);
    logits[size_t(0 * vocab + 40000)] = 50.0f;
    logits[size_t(1 * vocab + 7)] = 60.0f;
    logits[size_t(1 * vocab + 30000)] = 60.0f;  // a tie: the first wins
    logits[size_t(2 * vocab + 3)] = NAN;
    logits[size_t(2 * vocab + vocab - 1)] = 70.0f;
    const DeviceBuffer dl = to_device(logits);
    DeviceBuffer ids(3 * 4);
    argmax_rows(dl.as<float>(), 3, vocab, ids.as<int32_t>(), nullptr);
    EXPECT_EQ(from_device<int32_t>(ids.get(), 3), (std::vector<int32_t>{40000, 7, int32_t(vocab - 1)}));
  }
}

TEST(CudaKernels, Bf16GemmMatchesAReferenceOnRoundedInputs) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(5);
  const int64_t rows = 100, cols = 256, n = 37;
  std::vector<uint16_t> w(size_t(rows * cols)), x(size_t(n * cols));
  for (auto& v : w) v = ridge::f32_to_bf16(normal_values(1, rng)[0] * 0.05f);
  for (auto& v : x) v = ridge::f32_to_bf16(normal_values(1, rng)[0]);
  const DeviceBuffer dw = to_device(w), dx = to_device(x);
  const std::vector<float> y0 = normal_values(size_t(n * rows), rng);
  DeviceBuffer dy = to_device(y0);
  GemmLt gemm;
  for (bool accumulate : {false, true}) {
    gemm.bf16(dw.as<uint16_t>(), dx.as<uint16_t>(), dy.as<float>(), rows, cols, n, accumulate, nullptr);
    device_sync();
    std::vector<float> want(size_t(n * rows));
    for (int64_t t = 0; t < n; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < cols; ++c) s += double(bf16_to_f32(w[size_t(r * cols + c)])) * bf16_to_f32(x[size_t(t * cols + c)]);
        want[size_t(t * rows + r)] = float(s);
      }
    if (accumulate) {  // y was the first product
      for (int64_t i = 0; i < n * rows; ++i) want[size_t(i)] *= 2.0f;
    }
    EXPECT_TRUE(all_near(from_device<float>(dy.get(), want.size()), want, 1e-4f, 1e-3f)) << "accumulate " << accumulate;
  }
}

}  // namespace
}  // namespace ridge::cuda
