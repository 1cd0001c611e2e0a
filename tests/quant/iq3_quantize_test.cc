// IQ3_XXS and IQ3_S: ggml's own bytes for fixed inputs (small blocks in full, a larger input by
// checksum; produced by ggml_quantize_chunk of the libggml-base llama-cpp-python ships), the grid
// search tables, properties that can be checked by hand (zeros, sign and power-of-two symmetry,
// IQ3_XXS's sign parity, IQ3_S's shifted slots after an all-zero group), and the per-tensor types of
// the IQ3 file types as llama.cpp's rules give them. Whole files against llama.cpp:
// tests/conformance/test_quantize_iq3.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/dequant.h"
#include "quant/block_quantize.h"
#include "quant/iq3_codebook.h"
#include "quant/tensor_types.h"

namespace ridge::quant {
namespace {

std::vector<uint8_t> encode(DType t, const std::vector<float>& x, const float* importance = nullptr, int64_t rows = 1) {
  const int64_t cols = int64_t(x.size()) / rows;
  std::vector<uint8_t> out(size_t(rows * dtype_row_bytes(t, cols)));
  quantize_rows(t, x.data(), out.data(), rows, cols, importance);
  return out;
}

std::vector<float> decode(DType t, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> y(n);
  ref::dequantize_row(t, bytes.data(), y.data(), int64_t(n));
  return y;
}

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// ---- ggml's bytes for one super-block: x[i] = ((37 i) mod 64 - 31) / 16 (many equal magnitudes,
// so ties decide), importance 1 + i mod 7.

std::vector<float> small_input() {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[size_t(i)] = float((i * 37) % 64 - 31) / 16.0f;
  return x;
}

std::vector<float> small_importance() {
  std::vector<float> w(256);
  for (int i = 0; i < 256; ++i) w[size_t(i)] = float(1 + i % 7);
  return w;
}

TEST(Iq3Quantize, SmallBlocksAreGgmlsBytes) {
  const std::vector<uint8_t> xxs_plain = {
      0x99, 0x1c, 0xa6, 0xe0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xe0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xe0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xe0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92, 0x36, 0xd5, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92,
      0x36, 0xd5, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92, 0x36, 0xd5, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92,
      0x36, 0xd5};
  const std::vector<uint8_t> xxs_imatrix = {
      0xa1, 0x1c, 0xa6, 0xf0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xf0, 0x54, 0xa6, 0xf0, 0x7b, 0x5e, 0xdc, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xf0, 0x86, 0xa6, 0xf0, 0x9e, 0x5e, 0xf4, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0xa6, 0xf0, 0x86, 0xa6, 0xf0, 0xbd, 0x8a, 0xf4, 0xb8, 0x36, 0xe4, 0xc8, 0x36, 0xd4,
      0xc8, 0x31, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92, 0x36, 0xd5, 0x15, 0x75, 0xc9, 0xfa, 0xab, 0x92,
      0x36, 0xd5, 0x15, 0x75, 0xc9, 0xea, 0xab, 0x92, 0x36, 0xd5, 0x15, 0x75, 0xc9, 0xda, 0xab, 0xba,
      0x36, 0xd5};
  const std::vector<uint8_t> s_plain = {
      0x4b, 0x1c, 0x87, 0xe5, 0xab, 0x0f, 0xe4, 0xfb, 0x15, 0xea, 0x2f, 0x66, 0xa7, 0x78, 0xb7, 0xac,
      0xa2, 0x58, 0x87, 0xe5, 0xab, 0x0f, 0xe4, 0xfb, 0x15, 0xea, 0x2f, 0x66, 0xa7, 0x78, 0xb7, 0xac,
      0xa2, 0x58, 0x87, 0xe5, 0xab, 0x0f, 0xe4, 0xfb, 0x15, 0xea, 0x2f, 0x66, 0xa7, 0x78, 0xb7, 0xac,
      0xa2, 0x58, 0x87, 0xe5, 0xab, 0x0f, 0xe4, 0xfb, 0x15, 0xea, 0x2f, 0x66, 0xa7, 0x78, 0xb7, 0xac,
      0xa2, 0x58, 0xdb, 0x6d, 0xdb, 0x6d, 0xdb, 0x6d, 0xdb, 0x6d, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5,
      0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5, 0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5,
      0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5, 0x52, 0xa9, 0xff, 0xff, 0xff, 0xff};
  const std::vector<uint8_t> s_imatrix = {
      0xad, 0x1c, 0x87, 0xe5, 0xab, 0x0f, 0xe4, 0x3f, 0x13, 0xea, 0x37, 0x66, 0x7f, 0x78, 0x60, 0xac,
      0xa2, 0x58, 0x46, 0xe5, 0xab, 0x0f, 0xe9, 0xfb, 0x13, 0xc9, 0x2f, 0x66, 0xa7, 0x78, 0x60, 0xac,
      0xa2, 0x58, 0x46, 0x99, 0xab, 0x0f, 0xe9, 0xfb, 0x13, 0xc9, 0x37, 0x66, 0xa7, 0x78, 0x60, 0xb7,
      0xa2, 0x58, 0x46, 0xe5, 0xab, 0x0f, 0xe9, 0xfb, 0x13, 0xc9, 0x37, 0x66, 0xa7, 0x78, 0x60, 0xb7,
      0xa2, 0x58, 0xfb, 0x6d, 0xdb, 0x6d, 0xdb, 0x6d, 0xdb, 0x6d, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5,
      0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5, 0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5,
      0x52, 0xa9, 0xd5, 0x4a, 0xa5, 0x56, 0x2a, 0xb5, 0x52, 0xa9, 0xee, 0xee, 0xef, 0xef};
  const auto x = small_input();
  const auto w = small_importance();
  EXPECT_EQ(encode(DType::IQ3_XXS, x), xxs_plain);
  EXPECT_EQ(encode(DType::IQ3_XXS, x, w.data()), xxs_imatrix);
  EXPECT_EQ(encode(DType::IQ3_S, x), s_plain);
  EXPECT_EQ(encode(DType::IQ3_S, x, w.data()), s_imatrix);
}

// ---- ggml's bytes for block_quantize_test's golden input (4 rows x 512 from a 64-bit LCG, with
// outliers, a negative-only group, an all-zero group and importance with zero entries), by FNV-1a.

constexpr int64_t kRows = 4, kCols = 512;

float lcg_uniform(uint64_t& state) {  // [0, 1) from the top 24 bits: exact in f32
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return float(state >> 40) / 16777216.0f;
}

void golden_input(std::vector<float>& x, std::vector<float>& w) {
  const float scale[kRows] = {0.02f, 1.0f, 0.5f, 3.0f};
  x.assign(size_t(kRows * kCols), 0.0f);
  w.assign(size_t(kCols), 0.0f);
  uint64_t state = 12345;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kCols; ++j) {
      const float u1 = lcg_uniform(state), u2 = lcg_uniform(state);
      x[size_t(r * kCols + j)] = (u1 + u2 - 1.0f) * scale[r];
    }
  x[0 * kCols + 100] = 0.9f;
  x[1 * kCols + 7] = -25.0f;
  x[2 * kCols + 300] = 12.0f;
  x[2 * kCols + 301] = -11.0f;
  for (int64_t j = 256; j < 288; ++j) x[size_t(2 * kCols + j)] = -std::fabs(x[size_t(2 * kCols + j)]);
  for (int64_t j = 64; j < 96; ++j) x[size_t(3 * kCols + j)] = 0.0f;
  x[3 * kCols + 500] = 40.0f;
  for (int64_t j = 0; j < kCols; ++j) w[size_t(j)] = j % 61 == 0 ? 0.0f : 0.05f + float((j * 7919) % 997) / 97.0f;
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

TEST(Iq3Quantize, GoldenRowsAreGgmlsBytes) {
  std::vector<float> x, w;
  golden_input(x, w);
  EXPECT_EQ(fnv1a(encode(DType::IQ3_XXS, x, nullptr, kRows)), 0x594a3422cfdf168full);
  EXPECT_EQ(fnv1a(encode(DType::IQ3_XXS, x, w.data(), kRows)), 0x946b347953600859ull);
  EXPECT_EQ(fnv1a(encode(DType::IQ3_S, x, nullptr, kRows)), 0x841d0531715a4a50ull);
  EXPECT_EQ(fnv1a(encode(DType::IQ3_S, x, w.data(), kRows)), 0x076722da8a58c29full);
}

// ---- The search tables.

TEST(Iq3Quantize, CodebookMapsEveryKey) {
  for (DType t : {DType::IQ3_XXS, DType::IQ3_S}) {
    const Iq3Codebook& book = Iq3Codebook::of(t);
    EXPECT_EQ(book.size(), t == DType::IQ3_XXS ? 256 : 512);
    int on_grid = 0;
    for (int key = 0; key < Iq3Codebook::kKeys; ++key) {
      const int e = book.entry(key);
      if (e >= 0) {
        ++on_grid;
        EXPECT_EQ(iq3_key(book.levels(e).data()), key);
        EXPECT_TRUE(book.neighbours(key).empty());
        continue;
      }
      // Off the grid: the list starts at the grid's nearest distance, never decreases, and spans
      // two (IQ3_XXS) or three (IQ3_S) distances.
      const auto dist = [&](int entry) {
        int s = 0;
        for (int i = 0; i < 4; ++i) {
          const int d = book.levels(entry)[size_t(i)] - ((key >> (3 * i)) & 7);
          s += d * d;
        }
        return s;
      };
      int nearest = 1 << 30;
      for (int entry = 0; entry < book.size(); ++entry) nearest = std::min(nearest, dist(entry));
      const auto near = book.neighbours(key);
      ASSERT_FALSE(near.empty()) << key;
      EXPECT_EQ(dist(near[0]), nearest) << key;
      int distances = 1;
      for (size_t j = 1; j < near.size(); ++j) {
        ASSERT_GE(dist(near[j]), dist(near[j - 1])) << key;
        if (dist(near[j]) == dist(near[j - 1])) EXPECT_GT(near[j], near[j - 1]) << key;  // by entry within a distance
        else ++distances;
      }
      EXPECT_EQ(distances, t == DType::IQ3_XXS ? 2 : 3) << key;
    }
    EXPECT_EQ(on_grid, book.size());
  }
}

// ---- Properties.

TEST(Iq3Quantize, ZerosAreAllZeroBytes) {
  const std::vector<float> zeros(512, 0.0f);
  for (DType t : {DType::IQ3_XXS, DType::IQ3_S}) {
    for (uint8_t b : encode(t, zeros)) EXPECT_EQ(b, 0) << dtype_name(t);
    for (float v : decode(t, encode(t, zeros), zeros.size())) EXPECT_EQ(v, 0.0f) << dtype_name(t);
  }
  // IQ3_XXS treats magnitudes below 1e-8 as zero.
  for (uint8_t b : encode(DType::IQ3_XXS, std::vector<float>(256, 5e-9f))) EXPECT_EQ(b, 0);
}

// Negating the input (no zeros in it) negates the decoded row exactly; doubling it leaves every
// byte but d and doubles the decoded row (every step scales by powers of two exactly).
TEST(Iq3Quantize, SignAndPowerOfTwoSymmetry) {
  const auto x = gaussian(1024, 5);
  std::vector<float> neg(x.size()), twice(x.size());
  for (size_t i = 0; i < x.size(); ++i) neg[i] = -x[i], twice[i] = 2 * x[i];
  const auto w = small_importance();
  std::vector<float> imp;
  for (int r = 0; r < 4; ++r) imp.insert(imp.end(), w.begin(), w.end());
  for (DType t : {DType::IQ3_XXS, DType::IQ3_S}) {
    for (const float* importance : std::vector<const float*>{nullptr, imp.data()}) {
      const auto q = encode(t, x, importance, 1);
      const auto y = decode(t, q, x.size());
      auto yn = decode(t, encode(t, neg, importance), x.size());
      for (float& v : yn) v = -v;
      EXPECT_EQ(yn, y) << dtype_name(t);
      const auto q2 = encode(t, twice, importance);
      const size_t block = size_t(dtype_info(t).block_bytes);
      for (size_t i = 0; i < q.size(); ++i) {
        if (i % block >= 2) ASSERT_EQ(q2[i], q[i]) << dtype_name(t) << " byte " << i;
      }
      const auto y2 = decode(t, q2, x.size());
      for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y2[i], 2 * y[i]) << dtype_name(t) << " value " << i;
    }
  }
}

// IQ3_XXS stores an even count of minus signs per 8 values: where the input has an odd count, the
// one value that comes back with the wrong sign is the one of least weight (x² without imatrix).
TEST(Iq3Quantize, XxsParityFlipsTheLeastValue) {
  const auto x = gaussian(2048, 9);
  const auto y = decode(DType::IQ3_XXS, encode(DType::IQ3_XXS, x), x.size());
  int odd = 0;
  for (size_t g = 0; g < x.size(); g += 8) {
    int negatives = 0;
    size_t least = g;
    for (size_t i = g; i < g + 8; ++i) {
      negatives += x[i] < 0;
      if (x[i] * x[i] * x[i] * x[i] < x[least] * x[least] * x[least] * x[least]) least = i;
    }
    odd += negatives % 2;
    for (size_t i = g; i < g + 8; ++i) {
      const bool flipped = (x[i] < 0) != (y[i] < 0);
      EXPECT_EQ(flipped, negatives % 2 == 1 && i == least) << i;
    }
  }
  EXPECT_GT(odd, 50);
}

// ggml's IQ3_S does not advance its entry and sign slots past an all-zero group, so the groups
// after one land a slot early while their ninth bits stay at their own place. Without an imatrix
// a group's entries and signs depend on its own values only, which makes the shift visible.
TEST(Iq3Quantize, SAllZeroGroupShiftsTheLaterSlots) {
  auto x = gaussian(256, 13);
  const auto full = encode(DType::IQ3_S, x);
  for (int i = 32; i < 64; ++i) x[size_t(i)] = 0.0f;  // group 1
  const auto holed = encode(DType::IQ3_S, x);
  const auto bytes = [](const std::vector<uint8_t>& b, int at, int n) {
    return std::vector<uint8_t>(b.begin() + at, b.begin() + at + n);
  };
  const auto qs = [&](const std::vector<uint8_t>& b, int slot) { return bytes(b, 2 + 8 * slot, 8); };
  const auto signs = [&](const std::vector<uint8_t>& b, int slot) { return bytes(b, 74 + 4 * slot, 4); };
  EXPECT_EQ(qs(holed, 0), qs(full, 0));
  for (int g = 2; g < 8; ++g) {
    EXPECT_EQ(qs(holed, g - 1), qs(full, g)) << g;
    EXPECT_EQ(signs(holed, g - 1), signs(full, g)) << g;
    EXPECT_EQ(holed[size_t(66 + g)], full[size_t(66 + g)]) << g;  // qh by the group's own index
  }
  EXPECT_EQ(qs(holed, 7), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(holed[67], 0);  // the zero group's ninth bits
}

// Gaussian rows come back within the error their ~3 bits allow (relative RMS measured 0.21 for
// IQ3_XXS, 0.17 for IQ3_S, as ggml's bytes give); an imatrix lowers the error it weighs.
TEST(Iq3Quantize, GaussianRowsComeBackClose) {
  const auto x = gaussian(4096, 21);
  std::vector<float> w(x.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = i % 16 == 0 ? 50.0f : 1.0f;
  for (DType t : {DType::IQ3_XXS, DType::IQ3_S}) {
    const auto err = [&](const float* importance, bool weighted) {
      const auto y = decode(t, encode(t, x, importance, 1), x.size());
      double e = 0, p = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double k = weighted ? w[i] : 1.0;
        e += k * (y[i] - x[i]) * (y[i] - x[i]);
        p += k * x[i] * x[i];
      }
      return std::sqrt(e / p);
    };
    std::vector<float> imp(w.begin(), w.begin() + 4096);
    EXPECT_LT(err(nullptr, false), t == DType::IQ3_XXS ? 0.25 : 0.22) << dtype_name(t);
    EXPECT_LT(err(imp.data(), true), err(nullptr, true)) << dtype_name(t);
  }
}

// ---- Which tensors get which type: llama.cpp's rules for the IQ3 file types (llama-quant.cpp).

std::vector<TensorDesc> model_tensors(int64_t n_layer) {
  std::vector<TensorDesc> t;
  t.push_back({"token_embd.weight", DType::F16, {256, 300}});
  t.push_back({"output.weight", DType::F16, {256, 300}});
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const char* name : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"})
      t.push_back({p + name + ".weight", DType::F16, {256, 256}});
    t.push_back({p + "ffn_down.weight", DType::F16, {512, 256}});
    t.push_back({p + "attn_norm.weight", DType::F32, {256}});
  }
  return t;
}

TypeRules rules_for(FileType ft, bool imatrix) {
  TypeRules r;
  r.file_type = ft;
  r.has_imatrix = imatrix;
  return r;
}

std::map<std::string, DType> types_for(FileType ft, bool imatrix, int64_t n_head_kv) {
  const auto t = model_tensors(8);
  const auto c = choose_types(t, ModelHints{"llama", 8, 4, n_head_kv, 0}, rules_for(ft, imatrix));
  std::map<std::string, DType> m;
  for (size_t i = 0; i < t.size(); ++i) m[t[i].name] = c[i].type;
  return m;
}

TEST(Iq3Quantize, FileTypeMixes) {
  // IQ3_XXS: output Q5_K, token_embd IQ3_S, attn_q/k IQ2_S, attn_output IQ3_S; attn_v Q4_K with four
  // query heads per KV head, else IQ3_XXS with an imatrix, IQ3_S without; ffn_down IQ3_XXS with an
  // imatrix, without it Q4_K in the first eighth and Q3_K after.
  for (bool imatrix : {false, true}) {
    for (int64_t kv : {1, 4}) {
      auto m = types_for(FileType::IQ3_XXS, imatrix, kv);
      EXPECT_EQ(m["output.weight"], DType::Q5_K);
      EXPECT_EQ(m["token_embd.weight"], DType::IQ3_S);
      for (int i = 0; i < 8; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        EXPECT_EQ(m[p + "attn_q.weight"], DType::IQ2_S);
        EXPECT_EQ(m[p + "attn_k.weight"], DType::IQ2_S);
        EXPECT_EQ(m[p + "attn_output.weight"], DType::IQ3_S);
        EXPECT_EQ(m[p + "attn_v.weight"], kv == 1 ? DType::Q4_K : imatrix ? DType::IQ3_XXS : DType::IQ3_S);
        EXPECT_EQ(m[p + "ffn_down.weight"], imatrix ? DType::IQ3_XXS : i < 1 ? DType::Q4_K : DType::Q3_K);
        EXPECT_EQ(m[p + "ffn_gate.weight"], DType::IQ3_XXS);
        EXPECT_EQ(m[p + "attn_norm.weight"], DType::F32);
      }
    }
  }
  // IQ3_XS: IQ3_S, but attn_q/k and the middle layers' ffn_gate/up IQ3_XXS; attn_v Q4_K with gqa >= 4.
  auto m = types_for(FileType::IQ3_XS, true, 1);
  EXPECT_EQ(m["output.weight"], DType::Q6_K);
  EXPECT_EQ(m["token_embd.weight"], DType::IQ3_S);
  for (int i = 0; i < 8; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const DType middle = i >= 1 && i < 7 ? DType::IQ3_XXS : DType::IQ3_S;
    EXPECT_EQ(m[p + "attn_q.weight"], DType::IQ3_XXS);
    EXPECT_EQ(m[p + "attn_k.weight"], DType::IQ3_XXS);
    EXPECT_EQ(m[p + "attn_v.weight"], DType::Q4_K);
    EXPECT_EQ(m[p + "attn_output.weight"], DType::IQ3_S);
    EXPECT_EQ(m[p + "ffn_gate.weight"], middle) << i;
    EXPECT_EQ(m[p + "ffn_up.weight"], middle) << i;
    EXPECT_EQ(m[p + "ffn_down.weight"], DType::IQ3_S);
  }
  EXPECT_EQ(types_for(FileType::IQ3_XS, false, 4)["blk.0.attn_v.weight"], DType::IQ3_S);
  // IQ3_S: IQ3_S everywhere but the output (Q6_K) and, with gqa >= 4, attn_v (Q4_K).
  m = types_for(FileType::IQ3_S, false, 1);
  EXPECT_EQ(m["output.weight"], DType::Q6_K);
  EXPECT_EQ(m["blk.3.attn_v.weight"], DType::Q4_K);
  for (const char* n : {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight"})
    EXPECT_EQ(m[n], DType::IQ3_S) << n;
  // IQ3_M: attn_v and attn_output Q4_K, ffn_down Q4_K in the first eighth.
  m = types_for(FileType::IQ3_M, false, 4);
  EXPECT_EQ(m["blk.5.attn_v.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.5.attn_output.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.0.ffn_down.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.1.ffn_down.weight"], DType::IQ3_S);
  EXPECT_EQ(m["blk.1.ffn_up.weight"], DType::IQ3_S);
}

// Rows that miss the 256 block fall back to IQ4_NL, as in llama.cpp.
TEST(Iq3Quantize, ShortRowsFallBackToIq4Nl) {
  const std::vector<TensorDesc> t = {{"blk.0.ffn_up.weight", DType::F16, {96, 64}}};
  for (FileType ft : {FileType::IQ3_S, FileType::IQ3_M}) {
    const auto c = choose_types(t, ModelHints{"llama", 1, 4, 4, 0}, rules_for(ft, false));
    EXPECT_EQ(c[0].type, DType::IQ4_NL);
    EXPECT_TRUE(c[0].fell_back);
  }
}

}  // namespace
}  // namespace ridge::quant
