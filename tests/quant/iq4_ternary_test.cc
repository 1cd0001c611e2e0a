// IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0 against properties that can be checked by hand: the bytes of
// an all-zero block, rows that are already on the format's grid coming back exactly through
// ridge's own dequantizers, ternary rounding half away from zero, and a tiny model quantized to
// each type loading and computing logits near its F16 source. (Byte equality with ggml is pinned by
// block_quantize_test's goldens and by tests/conformance/test_quantize_iq.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/iq_grids.h"
#include "model/synth/synth_model.h"
#include "quant/block_quantize.h"
#include "quant/quantize_model.h"
#include "../model/tiny_arch_spec.h"
#include "tiny_model_runs.h"

namespace ridge::quant {
namespace {

std::vector<uint8_t> encode(DType t, const std::vector<float>& x, const float* importance = nullptr) {
  std::vector<uint8_t> out(size_t(dtype_row_bytes(t, int64_t(x.size()))));
  quantize_rows(t, x.data(), out.data(), 1, int64_t(x.size()), importance);
  return out;
}

std::vector<float> decode(DType t, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> y(n);
  ref::dequantize_row(t, bytes.data(), y.data(), int64_t(n));
  return y;
}

uint16_t u16_at(const std::vector<uint8_t>& b, size_t at) {
  uint16_t v;
  std::memcpy(&v, b.data() + at, 2);
  return v;
}

TEST(Iq4Ternary, AllZeroBlocksHaveKnownBytes) {
  const std::vector<float> zeros(256, 0.0f);
  // TQ2_0: every value t + 1 = 1 in each bit pair (0x55), d = 0.
  auto b = encode(DType::TQ2_0, zeros);
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(b[i], 0x55) << i;
  EXPECT_EQ(u16_at(b, 64), 0);
  // TQ1_0: five trits of 1 are 121 in base 3, stored as ceil(121 * 256 / 243) = 128; four trits
  // shifted up one digit are 120, stored as 127.
  b = encode(DType::TQ1_0, zeros);
  for (size_t i = 0; i < 48; ++i) EXPECT_EQ(b[i], 128) << i;
  for (size_t i = 48; i < 52; ++i) EXPECT_EQ(b[i], 127) << i;
  EXPECT_EQ(u16_at(b, 52), 0);
  // IQ4_NL: d = 0 and every index 8 (the level nearest 0, which is 1).
  b = encode(DType::IQ4_NL, std::vector<float>(32, 0.0f));
  EXPECT_EQ(u16_at(b, 0), 0);
  for (size_t i = 2; i < 18; ++i) EXPECT_EQ(b[i], 0x88) << i;
  // IQ4_XS: d = -0 (ggml negates the largest block scale, 0), each 6-bit scale 0 + 32 (high bits
  // 2, low nibble 0), every index 8.
  b = encode(DType::IQ4_XS, zeros);
  EXPECT_EQ(u16_at(b, 0), 0x8000);
  EXPECT_EQ(u16_at(b, 2), 0xaaaa);
  for (size_t i = 4; i < 8; ++i) EXPECT_EQ(b[i], 0) << i;
  for (size_t i = 8; i < 136; ++i) EXPECT_EQ(b[i], 0x88) << i;
  for (DType t : {DType::IQ4_NL, DType::IQ4_XS, DType::TQ1_0, DType::TQ2_0})
    for (float v : decode(t, encode(t, zeros), 256)) EXPECT_EQ(v, 0.0f) << dtype_name(t);
}

// Values d * t, t in {-1, 0, 1}, with a 1 or -1 in every super-block and d exact in f16, come back
// exactly from both ternary types.
TEST(Iq4Ternary, TernaryRowsComeBackExactly) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> trit(-1, 1);
  const float d[] = {0.375f, 1.0f / 64, 3.5f, 0.0078125f};
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = d[i / 256] * float(i % 256 == 17 ? -1 : trit(rng));
  // Any row: the two layouts hold the same trits and the same d.
  std::vector<float> g(1024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : g) v = normal(rng);
  EXPECT_EQ(decode(DType::TQ1_0, encode(DType::TQ1_0, g), g.size()), decode(DType::TQ2_0, encode(DType::TQ2_0, g), g.size()));
  for (DType t : {DType::TQ1_0, DType::TQ2_0}) {
    EXPECT_EQ(decode(t, encode(t, x), x.size()), x) << dtype_name(t);
    const std::vector<float> w(x.size(), 2.0f);  // an imatrix changes nothing
    EXPECT_EQ(encode(t, x, w.data()), encode(t, x)) << dtype_name(t);
  }
}

// x / d exactly one half rounds away from zero (to +-1), just under it to 0.
TEST(Iq4Ternary, TernaryRoundsHalfAwayFromZero) {
  std::vector<float> x(256, 0.0f);
  x[0] = 2.0f;
  x[1] = 1.0f, x[2] = -1.0f, x[3] = 0.99f, x[4] = -0.99f, x[200] = 1.0f, x[250] = -1.0f;
  for (DType t : {DType::TQ1_0, DType::TQ2_0}) {
    const auto y = decode(t, encode(t, x), 256);
    EXPECT_EQ(y[0], 2.0f) << dtype_name(t);
    EXPECT_EQ(y[1], 2.0f) << dtype_name(t);
    EXPECT_EQ(y[2], -2.0f) << dtype_name(t);
    EXPECT_EQ(y[3], 0.0f) << dtype_name(t);
    EXPECT_EQ(y[4], 0.0f) << dtype_name(t);
    EXPECT_EQ(y[200], 2.0f) << dtype_name(t);   // in TQ1_0's second group of bytes
    EXPECT_EQ(y[250], -2.0f) << dtype_name(t);  // in TQ1_0's four-trit bytes
  }
}

// A block that is s times the sixteen levels (each twice, shuffled) is found exactly: the
// least-squares scale of the right levels is s, exact in f16. IQ4_XS: eight such blocks whose
// scales are d * k, k in [-32, 31] with -32 the largest, give d and every k back.
TEST(Iq4Ternary, RowsOnTheLevelGridComeBackExactly) {
  std::mt19937 rng(3);
  const auto block = [&](float s) {
    std::vector<float> b;
    for (int rep = 0; rep < 2; ++rep)
      for (int8_t v : ref::kIq4nlValues) b.push_back(s * float(v));
    std::shuffle(b.begin(), b.end(), rng);
    return b;
  };
  std::vector<float> nl;
  for (float s : {0.0078125f, -0.25f, 3.0f, 1.0f / 1024}) {
    const auto b = block(s);
    nl.insert(nl.end(), b.begin(), b.end());
  }
  EXPECT_EQ(decode(DType::IQ4_NL, encode(DType::IQ4_NL, nl), nl.size()), nl);
  const std::vector<float> w(nl.size(), 1.0f);
  EXPECT_EQ(decode(DType::IQ4_NL, encode(DType::IQ4_NL, nl, w.data()), nl.size()), nl);

  const float d = 1.0f / 256;
  const int k[8] = {-32, 5, -7, 31, 1, -1, 16, -20};
  std::vector<float> xs;
  for (int b = 0; b < 8; ++b) {
    const auto v = block(d * float(k[b]));
    xs.insert(xs.end(), v.begin(), v.end());
  }
  const auto bytes = encode(DType::IQ4_XS, xs);
  EXPECT_EQ(f16_to_f32(u16_at(bytes, 0)), d);
  EXPECT_EQ(decode(DType::IQ4_XS, bytes, xs.size()), xs);
}

// A tiny model (rows of 256 and 512: every super-block fits) through ridge quantize, loaded and
// run: IQ4_NL and IQ4_XS as close to the F16 logits as Q4_0 (their 4.5 / 4.25 bits, non-linear
// levels), the ternary types finite but coarser (a random model is no ternary one).
TEST(Iq4Ternary, TinyModelRunsOnEachType) {
  const std::string f16 = test::temp_gguf("iq4t", "f16");
  synth::SynthOptions o;
  o.spec = tiny_spec("llama");
  o.spec.n_embd = 256, o.spec.n_ff = 512, o.spec.head_dim = 64, o.spec.rope_dim = 64, o.spec.n_head_kv = 1;
  o.type = DType::F16;
  o.stddev = 0.1f;
  synth::write_synth_model(o, f16);
  const auto base = test::prompt_logits(f16);
  const auto error_of = [&](FileType type) {
    const std::string out = test::temp_gguf("iq4t", std::string(file_type_info(type).name));
    QuantizeOptions q;
    q.input = f16;
    q.output = out;
    q.rules.file_type = type;
    q.progress = false;
    quantize_gguf(q);
    const auto logits = test::prompt_logits(out);
    std::filesystem::remove(out);
    for (float v : logits) EXPECT_TRUE(std::isfinite(v)) << file_type_info(type).name;
    return test::relative_rms(logits, base);
  };
  const double q4_0 = error_of(FileType::Q4_0);
  EXPECT_LT(error_of(FileType::IQ4_NL), 1.1 * q4_0);  // measured: 0.43 against Q4_0's 0.49
  EXPECT_LT(error_of(FileType::IQ4_XS), 1.1 * q4_0);  // 0.41
  for (FileType t : {FileType::TQ1_0, FileType::TQ2_0}) {  // 1.35: three levels a weight
    const double e = error_of(t);
    EXPECT_GT(e, q4_0) << file_type_info(t).name;
    EXPECT_LT(e, 2.0) << file_type_info(t).name;
  }
  std::filesystem::remove(f16);
}

}  // namespace
}  // namespace ridge::quant
