// IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M: the codebook search tables against what can be
// checked by hand (ggml's packed grid keys, candidate lists nearest first), one super-block of each
// type against the bytes ggml's quantizer writes for it (goldens from ggml_quantize_chunk), the
// imatrix requirement, and a tiny model quantized to each file type running near its F16 source.
// (Whole files byte-identical to llama-quantize's: tests/conformance/test_quantize_iq2.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/gguf_file.h"
#include "model/synth/synth_model.h"
#include "quant/block_quantize.h"
#include "quant/codebook_search.h"
#include "quant/importance_matrix.h"
#include "quant/quantize_model.h"
#include "../model/tiny_arch_spec.h"
#include "tiny_model_runs.h"

namespace ridge::quant {
namespace {

constexpr DType kTypes[] = {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ1_S, DType::IQ1_M};

int distance(const std::array<int8_t, 8>& a, const int8_t* b) {
  int d = 0;
  for (int i = 0; i < 8; ++i) d += (a[size_t(i)] - b[i]) * (a[size_t(i)] - b[i]);
  return d;
}

TEST(Codebook, KeysAreGgmlsPackedGrid) {
  // ggml's kgrid tables (2 bits a value) all begin 0, 2, 5, 8, 10, 17; their last entries differ.
  const struct { DType type; int size; uint16_t last; } books[] = {
      {DType::IQ2_XXS, 256, 43268},
      {DType::IQ2_XS, 512, 43690},
      {DType::IQ2_S, 1024, 43690},
      {DType::IQ1_S, 2048, 43690}};
  for (const auto& b : books) {
    const Codebook& book = Codebook::of(b.type);
    ASSERT_EQ(book.size(), b.size);
    const uint16_t first[] = {0, 2, 5, 8, 10, 17};
    for (int c = 0; c < 6; ++c) EXPECT_EQ(Codebook::key(book.levels(c).data()), first[c]) << dtype_name(b.type);
    EXPECT_EQ(Codebook::key(book.levels(b.size - 1).data()), b.last) << dtype_name(b.type);
    for (int c = 0; c < book.size(); ++c) {
      EXPECT_EQ(book.find(Codebook::key(book.levels(c).data())), c);
      EXPECT_TRUE(book.candidates(Codebook::key(book.levels(c).data())).empty());
    }
  }
  EXPECT_EQ(&Codebook::of(DType::IQ1_M), &Codebook::of(DType::IQ1_S));
  EXPECT_THROW(Codebook::of(DType::Q4_K), Error);
}

TEST(Codebook, CandidatesAreTheNearestFirst) {
  const struct { DType type; int nearest; } books[] = {
      {DType::IQ2_XXS, 2}, {DType::IQ2_XS, 2}, {DType::IQ2_S, 1}, {DType::IQ1_S, 3}};
  for (const auto& b : books) {
    const Codebook& book = Codebook::of(b.type);
    int off_grid = 0;
    for (int k = 0; k < 6561; ++k) {  // every key of levels 0..2
      int8_t l[8];
      for (int i = 0, r = k; i < 8; ++i, r /= 3) l[i] = int8_t(r % 3);
      const uint16_t key = Codebook::key(l);
      if (book.find(key) >= 0) continue;
      ++off_grid;
      const auto c = book.candidates(key);
      ASSERT_FALSE(c.empty());
      // Sorted by distance, then by index; exactly `nearest` distinct distances, and no codeword
      // left out is as near as the last one taken.
      std::vector<int> d(size_t(book.size()));
      for (int w = 0; w < book.size(); ++w) d[size_t(w)] = distance(book.levels(w), l);
      int distinct = 1;
      for (size_t j = 1; j < c.size(); ++j) {
        const int d0 = d[c[j - 1]], d1 = d[c[j]];
        ASSERT_TRUE(d0 < d1 || (d0 == d1 && c[j - 1] < c[j]));
        distinct += d1 > d0;
      }
      const int limit = d[c.back()];
      bool present[33] = {};
      int within = 0;
      for (int v : d) within += v <= limit, present[v] = true;
      ASSERT_EQ(within, int(c.size()));
      int nearer = 0;  // distinct distances up to the limit: all of them taken
      for (int v = 0; v <= limit; ++v) nearer += present[v];
      ASSERT_EQ(distinct, nearer);
      ASSERT_EQ(distinct, b.nearest);
    }
    EXPECT_EQ(off_grid, 6561 - book.size()) << dtype_name(b.type);
  }
}

// One super-block of values with many ties ((37 i mod 101) - 50) / 16 and importance 1 + (13 i mod 7):
// the bytes ggml_quantize_chunk writes (llama-cpp-python's libggml-base).
std::vector<float> golden_values() {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[size_t(i)] = float((i * 37) % 101 - 50) / 16.0f;
  return x;
}

std::vector<float> golden_importance() {
  std::vector<float> w(256);
  for (int i = 0; i < 256; ++i) w[size_t(i)] = float(1 + (i * 13) % 7);
  return w;
}

std::vector<uint8_t> encode(DType t, const std::vector<float>& x, const float* importance) {
  std::vector<uint8_t> out(size_t(dtype_row_bytes(t, int64_t(x.size()))));
  quantize_rows(t, x.data(), out.data(), 1, int64_t(x.size()), importance);
  return out;
}

TEST(Iq2Iq1Quantize, OneSuperBlockAsGgmlWritesIt) {
  const struct { DType type; bool importance; std::vector<uint8_t> bytes; } goldens[] = {
      {DType::IQ2_XXS, true,
       {0xd7, 0x24, 0xba, 0x72, 0x72, 0x74, 0x4b, 0xad, 0xd4, 0xe2, 0x74, 0xca, 0xca, 0xca, 0x16, 0x0b, 0xad,
        0xd4, 0xd8, 0xa1, 0xa1, 0xaa, 0xa5, 0x56, 0x2b, 0xfd, 0xaa, 0x42, 0xba, 0x7b, 0xe9, 0xe5, 0x52, 0xeb,
        0x72, 0x72, 0x74, 0x74, 0x52, 0xa9, 0xc5, 0xe2, 0xca, 0xca, 0xd8, 0xd8, 0x34, 0x5a, 0xa9, 0xe5, 0xa1,
        0xaa, 0xaa, 0x42, 0xad, 0x56, 0x7a, 0xf9, 0x42, 0x7b, 0x72, 0x72, 0x4b, 0xad, 0x56, 0xea}},
      {DType::IQ2_XS, true,
       {0xf3, 0x26, 0xb4, 0x96, 0xb4, 0xb4, 0x91, 0xa4, 0x91, 0x2c, 0xde, 0x2c, 0x5e, 0x2d, 0x5e, 0x69, 0xb7,
        0x4b, 0xb7, 0x4b, 0xa7, 0x5b, 0x36, 0x5b, 0x2b, 0xd3, 0x44, 0xd3, 0x44, 0x97, 0xf6, 0x96, 0xc7, 0xb4,
        0x97, 0xa4, 0x91, 0xa4, 0x82, 0x2d, 0x82, 0x2d, 0x5e, 0x69, 0xb7, 0x69, 0xb7, 0x4b, 0xb7, 0x5b, 0x36,
        0x5b, 0x2e, 0x5b, 0x44, 0xd3, 0x44, 0x97, 0x50, 0x96, 0x4d, 0xb4, 0xb4, 0xb4, 0x91, 0xa4, 0xff, 0xaa,
        0xe9, 0x89, 0x8e, 0x9a, 0x9e, 0xfc}},
      {DType::IQ2_S, true,
       {0xcb, 0x26, 0x28, 0x2e, 0x2f, 0x91, 0x91, 0xab, 0xb4, 0xb6, 0x5e, 0x7a, 0x91, 0x67, 0x6d, 0xae, 0x28,
        0x2e, 0x2f, 0x91, 0x91, 0xab, 0xb4, 0xb4, 0x5e, 0x7a, 0x7b, 0x91, 0x67, 0x6d, 0x28, 0x28, 0x23, 0xdb,
        0x5b, 0x5a, 0xd2, 0x92, 0x96, 0xb6, 0xb4, 0xa4, 0xa5, 0x2d, 0x2d, 0x69, 0x69, 0x4b, 0x4b, 0x5a, 0xd2,
        0xd2, 0x96, 0x96, 0xb4, 0xb4, 0xa5, 0x25, 0x2d, 0x6d, 0x69, 0x49, 0x4b, 0x5a, 0xda, 0xd2, 0x55, 0xa9,
        0xbf, 0x52, 0x95, 0xfa, 0xaf, 0x15, 0xcb, 0xbb, 0x9b, 0xbb, 0xbc, 0xba, 0xb9, 0xfb}},
      {DType::IQ2_S, false,
       {0xf9, 0x26, 0x28, 0x2e, 0x2f, 0x91, 0x91, 0xab, 0xb4, 0x5e, 0x5e, 0x7a, 0x7b, 0x67, 0x67, 0xae, 0x28,
        0x2e, 0x2f, 0x91, 0x91, 0xab, 0xb4, 0xb4, 0x5e, 0x7a, 0x7b, 0x78, 0x67, 0x6d, 0x28, 0x28, 0x23, 0xdb,
        0x5b, 0x5a, 0xd2, 0x92, 0x96, 0xb6, 0xb4, 0xa4, 0xa5, 0x2d, 0x2d, 0x69, 0x69, 0x4b, 0x4b, 0x5a, 0xd2,
        0xd2, 0x96, 0x96, 0xb4, 0xb4, 0xa5, 0x25, 0x2d, 0x6d, 0x69, 0x49, 0x4b, 0x5a, 0xda, 0xd2, 0x55, 0xe9,
        0xbf, 0x52, 0x95, 0xfa, 0xab, 0x15, 0xbb, 0xab, 0xaa, 0xba, 0xbc, 0xba, 0xaa, 0xfb}},
      {DType::IQ1_S, true,
       {0xa7, 0x31, 0x34, 0x35, 0x46, 0x0d, 0x0b, 0x0b, 0x04, 0xfb, 0x2e, 0x94, 0x94, 0x91, 0x77, 0x22, 0x34,
        0x35, 0xc9, 0xc9, 0x0b, 0x0b, 0x0d, 0x0d, 0x2e, 0x94, 0x94, 0x92, 0x77, 0x22, 0x34, 0x35, 0x35, 0x46,
        0xdb, 0xfa, 0x92, 0x60, 0xb2, 0xfd, 0xfe, 0xe6, 0x92, 0x74, 0x92, 0xfc, 0xb6, 0xef, 0xdb, 0xf6}},
      {DType::IQ1_M, true,
       {0x34, 0xee, 0xc9, 0x0d, 0x0b, 0x0b, 0x0d, 0x2e, 0x2e, 0x94, 0x94, 0x9a, 0x77, 0x34, 0x34, 0x35, 0x46,
        0x46, 0x05, 0x0d, 0x0d, 0x04, 0x2e, 0x94, 0x94, 0x92, 0x77, 0x34, 0x34, 0x35, 0xd5, 0x46, 0x3b, 0x52,
        0xa2, 0x2a, 0xea, 0xee, 0x3e, 0x3b, 0xb3, 0xd2, 0x2a, 0x6a, 0xee, 0x3e, 0x3b, 0xb2, 0xbf, 0x2d, 0xb7,
        0xad, 0xf7, 0x1f, 0xb6, 0x3f}},
      {DType::IQ1_M, false,
       {0x34, 0x35, 0xc9, 0x0d, 0x0b, 0x0b, 0x04, 0xfb, 0x2e, 0x94, 0x94, 0x77, 0x77, 0x34, 0x34, 0x34, 0xc9,
        0x46, 0x45, 0x45, 0x04, 0x0d, 0xfb, 0x94, 0x94, 0x94, 0xbb, 0x34, 0x22, 0x4e, 0x35, 0xc9, 0xbb, 0x52,
        0xa2, 0x02, 0x6a, 0x6e, 0x3e, 0x6b, 0xb2, 0xa2, 0xa2, 0x60, 0xee, 0x3d, 0x3f, 0x2b, 0xbf, 0x1f, 0xff,
        0xdf, 0xf7, 0x1f, 0xff, 0x3f}},
  };
  const auto x = golden_values();
  const auto w = golden_importance();
  for (const auto& g : goldens)
    EXPECT_EQ(encode(g.type, x, g.importance ? w.data() : nullptr), g.bytes)
        << dtype_name(g.type) << (g.importance ? " with" : " without") << " importance";
}

TEST(Iq2Iq1Quantize, ImportanceIsRequiredWhereGgmlRequiresIt) {
  const auto x = golden_values();
  for (DType t : {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ1_S})
    EXPECT_THROW(encode(t, x, nullptr), Error) << dtype_name(t);
  for (DType t : kTypes) EXPECT_TRUE(can_quantize(t)) << dtype_name(t);
}

// Zeros stay zeros (d = 0, which the decoder reads as all zeros), and random rows come back close
// through ridge's own dequantizers: a sanity bound per type's bits, not a match to any reference.
TEST(Iq2Iq1Quantize, RoundTripThroughRidgesDequantizer) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1024), w(1024);
  for (float& v : x) v = normal(rng);
  for (float& v : w) v = 0.5f + std::fabs(normal(rng));
  const struct { DType type; double bound; } cases[] = {  // measured 0.35, 0.30, 0.25, 0.50, 0.47
      {DType::IQ2_XXS, 0.42}, {DType::IQ2_XS, 0.36}, {DType::IQ2_S, 0.3}, {DType::IQ1_S, 0.6}, {DType::IQ1_M, 0.57}};
  for (const auto& c : cases) {
    const auto zeros = encode(c.type, std::vector<float>(256, 0.0f), w.data());
    std::vector<float> back(256, 1.0f);
    ref::dequantize_row(c.type, zeros.data(), back.data(), 256);
    for (float v : back) ASSERT_EQ(v, 0.0f) << dtype_name(c.type);
    const auto bytes = encode(c.type, x, w.data());
    std::vector<float> y(x.size());
    ref::dequantize_row(c.type, bytes.data(), y.data(), int64_t(y.size()));
    double err = 0, power = 0;
    for (size_t i = 0; i < x.size(); ++i) err += double(y[i] - x[i]) * (y[i] - x[i]), power += double(x[i]) * x[i];
    EXPECT_LT(std::sqrt(err / power), c.bound) << dtype_name(c.type);
  }
}

// An importance matrix for every 2-D weight of `path` from random activations.
ImportanceMatrix random_imatrix(const std::string& path, bool skip_ffn_up) {
  const gguf::GgufFile f = gguf::GgufFile::open(path);
  ImportanceMatrix m;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const auto& t : f.tensors()) {
    if (t.shape.size() < 2 || (skip_ffn_up && t.name.find("ffn_up") != std::string::npos)) continue;
    std::vector<float> x(size_t(t.shape[0]) * 4);
    for (float& v : x) v = normal(rng);
    m.accumulate(t.name, x.data(), 4, t.shape[0]);
  }
  m.chunk_count = 1;
  return m;
}

// llama-quantize refuses these file types without importance weights, and any tensor of a very
// low-bit type the imatrix has no entry for; a dry run only sizes. A tiny model (rows of 256 and
// 512) with an imatrix runs on every file type, about as near its F16 logits as Q2_K.
TEST(Iq2Iq1Quantize, TinyModelFileTypes) {
  const std::string f16 = test::temp_gguf("iq21", "f16");
  synth::SynthOptions o;
  o.spec = tiny_spec("llama");
  o.spec.n_embd = 256, o.spec.n_ff = 512, o.spec.head_dim = 64, o.spec.rope_dim = 64, o.spec.n_head_kv = 2;
  o.type = DType::F16;
  o.stddev = 0.1f;
  synth::write_synth_model(o, f16);
  const auto base = test::prompt_logits(f16);
  const ImportanceMatrix full = random_imatrix(f16, false), partial = random_imatrix(f16, true);
  const auto run = [&](FileType type, const ImportanceMatrix* imatrix, bool dry_run = false) {
    QuantizeOptions q;
    q.input = f16;
    q.output = test::temp_gguf("iq21", std::string(file_type_info(type).name));
    q.rules.file_type = type;
    q.rules.has_imatrix = imatrix != nullptr;
    q.imatrix = imatrix;
    q.progress = false;
    q.threads = 2;
    q.dry_run = dry_run;
    quantize_gguf(q);
    return q.output;
  };
  // A random 3-layer model (and a random imatrix) amplifies 2-bit errors: Q2_K is at 0.95 here, the
  // IQ types measured 0.99 (IQ2_M) to 1.20 (IQ1_M).
  const std::string q2_k = run(FileType::Q2_K, &full);
  const double q2_k_error = test::relative_rms(test::prompt_logits(q2_k), base);
  std::filesystem::remove(q2_k);
  for (FileType type :
       {FileType::IQ2_XXS, FileType::IQ2_XS, FileType::IQ2_S, FileType::IQ2_M, FileType::IQ1_S, FileType::IQ1_M}) {
    const char* name = file_type_info(type).name.data();
    try {
      run(type, nullptr);
      ADD_FAILURE() << name << " without an imatrix was written";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("needs an importance matrix"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(run(type, nullptr, true)) << name;
    EXPECT_THROW(run(type, &partial), Error) << name;  // ffn_up has no entry
    const std::string out = run(type, &full);
    const auto logits = test::prompt_logits(out);
    std::filesystem::remove(out);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v)) << name;
    EXPECT_LT(test::relative_rms(logits, base), 1.4 * q2_k_error) << name;
  }
  std::filesystem::remove(f16);
}

}  // namespace
}  // namespace ridge::quant
