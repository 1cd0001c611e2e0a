// `ridge quantize --awq`: the search finds a scaling where a few input channels carry most of the
// activation energy, never reports more error than plain rounding, and the divisors folded into the
// norms and ffn_up rows leave the model's function unchanged (Q8_0 with AWQ computes what Q8_0
// without it does, up to rounding).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "core/error.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "quant/awq.h"
#include "quant/importance_matrix.h"
#include "quant/quantize_model.h"
#include "../model/tiny_arch_spec.h"
#include "tiny_model_runs.h"

namespace ridge::quant {
namespace {

std::string temp_path(const std::string& tag) { return test::temp_gguf("awq", tag); }

// Activations of every dense matmul input, with channels 0..3 twenty times the others.
ImportanceMatrix outlier_imatrix(const gguf::GgufFile& file) {
  ImportanceMatrix m;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (const auto& t : file.tensors()) {
    if (t.shape.size() != 2 || t.name.find("blk.") != 0) continue;
    std::vector<float> x(size_t(16 * t.shape[0]));
    for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * (int64_t(i) % t.shape[0] < 4 ? 20.0f : 1.0f);
    m.accumulate(t.name, x.data(), 16, t.shape[0]);
  }
  return m;
}

QuantizeReport quantize(const std::string& in, const std::string& out, FileType type, const ImportanceMatrix* im, bool awq) {
  QuantizeOptions o;
  o.input = in;
  o.output = out;
  o.rules.file_type = type;
  o.rules.has_imatrix = im != nullptr;
  o.imatrix = im;
  o.awq = awq;
  o.progress = false;
  return quantize_gguf(o);
}

TEST(Awq, ScalesSalientChannelsAndKeepsTheModelsFunction) {
  const std::string f16 = temp_path("f16"), q8 = temp_path("q8"), q8a = temp_path("q8a"), q4a = temp_path("q4a");
  synth::SynthOptions o;
  o.spec = tiny_spec("llama");
  o.spec.n_ff = 128;
  o.type = DType::F16;
  o.stddev = 0.15f;
  synth::write_synth_model(o, f16);
  const ImportanceMatrix im = outlier_imatrix(gguf::GgufFile::open(f16));

  const QuantizeReport r4 = quantize(f16, q4a, FileType::Q4_0, &im, true);
  ASSERT_EQ(r4.awq_groups.size(), 3u * 3);  // qkv, gate+up, down in each of 3 layers
  int scaled = 0;
  for (const auto& g : r4.awq_groups) {
    EXPECT_LE(g.error_scaled, g.error_plain) << g.name;
    scaled += g.alpha > 0 && g.error_scaled < 0.9 * g.error_plain;
  }
  EXPECT_GE(scaled, 6) << "the outlier channels should pay for scaling in most groups";

  quantize(f16, q8, FileType::Q8_0, &im, false);
  quantize(f16, q8a, FileType::Q8_0, &im, true);
  const auto base = test::prompt_logits(f16), plain = test::prompt_logits(q8), scaled_q8 = test::prompt_logits(q8a);
  // The fake imatrix does not describe this model's activations, so the scaling may cost a little;
  // a wrong fold (norms, ffn_up rows) would be off by the scales themselves (up to 20x).
  EXPECT_LT(test::relative_rms(plain, base), 0.06);
  EXPECT_LT(test::relative_rms(scaled_q8, base), 2 * test::relative_rms(plain, base));
  const gguf::GgufFile awq_file = gguf::GgufFile::open(q8a), plain_file = gguf::GgufFile::open(q8);
  EXPECT_NE(0, std::memcmp(awq_file.find_tensor("blk.0.attn_norm.weight")->data,
                           plain_file.find_tensor("blk.0.attn_norm.weight")->data, 64 * 4));

  QuantizeOptions no_imatrix;
  no_imatrix.input = f16;
  no_imatrix.output = temp_path("never");
  no_imatrix.awq = true;
  no_imatrix.progress = false;
  EXPECT_THROW(quantize_gguf(no_imatrix), Error);
  EXPECT_FALSE(std::filesystem::exists(no_imatrix.output));
  for (const auto& p : {f16, q8, q8a, q4a}) std::filesystem::remove(p);
}

TEST(Awq, AppliesColumnScalesThenRowDivisors) {
  AwqTransform t{{2.0f, 0.5f, 1.0f}, {4.0f, 8.0f}};
  float x[3] = {1.0f, 2.0f, 3.0f};
  apply_awq(t, 1, x, 3);
  EXPECT_FLOAT_EQ(x[0], 0.25f);
  EXPECT_FLOAT_EQ(x[1], 0.125f);
  EXPECT_FLOAT_EQ(x[2], 0.375f);
}

}  // namespace
}  // namespace ridge::quant
