// NVFP4 through the whole path: `ridge quantize --type NVFP4` writes each matrix's per-tensor factor
// (one per expert for stacked experts) as "<name>.scale", the loader applies it to the matmul's
// output, and requantizing such a file folds the factor into the weights instead of dropping it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "quant/quantize_model.h"
#include "../model/tiny_arch_spec.h"

namespace ridge {
namespace {

std::string temp_path(const std::string& tag) {
  return (std::filesystem::temp_directory_path() / ("nvfp4_" + tag + "_" + std::to_string(getpid()) + ".gguf")).string();
}

std::vector<float> logits_of(const std::string& path, const std::vector<int32_t>& tokens) {
  const Model model = load_model(path);
  ModelForward forward(model, 2);
  KvCache cache = forward.make_cache(64);
  std::vector<float> logits;
  forward.forward(tokens, cache, /*all_logits=*/true, logits);
  return logits;
}

double relative_rms(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, power = 0;
  for (size_t i = 0; i < a.size(); ++i) err += double(a[i] - b[i]) * (a[i] - b[i]), power += double(b[i]) * b[i];
  return std::sqrt(err / power);
}

void quantize(const std::string& in, const std::string& out, quant::FileType type) {
  quant::QuantizeOptions o;
  o.input = in;
  o.output = out;
  o.rules.file_type = type;
  o.progress = false;
  quant::quantize_gguf(o);
}

class Nvfp4Model : public ::testing::TestWithParam<std::string> {};

TEST_P(Nvfp4Model, FactorsAreWrittenAppliedAndFolded) {
  const std::string f16 = temp_path("f16"), fp4 = temp_path("fp4"), q8 = temp_path("q8"), q4 = temp_path("q4");
  synth::SynthOptions o;
  o.spec = tiny_spec(GetParam());
  o.spec.n_ff = 128;  // rows of 64s: NVFP4 blocks fit every matrix
  o.type = DType::F16;
  o.stddev = 0.15f;
  synth::write_synth_model(o, f16);
  quantize(f16, fp4, quant::FileType::NVFP4);
  quantize(fp4, q8, quant::FileType::Q8_0);

  const gguf::GgufFile file = gguf::GgufFile::open(fp4);
  int nvfp4 = 0;
  for (const auto& t : file.tensors()) {
    if (t.type != DType::NVFP4) continue;
    ++nvfp4;
    const gguf::TensorInfo* factor = file.find_tensor(gguf::factor_name(t.name));
    ASSERT_NE(factor, nullptr) << t.name;
    EXPECT_EQ(factor->n_elements, t.shape.size() > 2 ? t.shape[2] : 1) << t.name;
  }
  EXPECT_GE(nvfp4, 3 * 4);
  const Model model = load_model(fp4);
  EXPECT_NE(model.weights.layers[0].wq.scale, 1.0f);
  if (!model.weights.layers[0].experts.empty())  // each expert has its own factor
    EXPECT_NE(model.weights.layers[0].experts[0].w_up.scale, model.weights.layers[0].experts[1].w_up.scale);
  const gguf::GgufFile requantized = gguf::GgufFile::open(q8);
  for (const auto& t : requantized.tensors()) EXPECT_EQ(t.name.find(".scale"), std::string::npos) << t.name;

  const std::vector<int32_t> tokens = {5, 17, 200, 31, 9, 64, 150, 3, 77};
  const auto base = logits_of(f16, tokens), got = logits_of(fp4, tokens), folded = logits_of(q8, tokens);
  const double nvfp4_error = relative_rms(got, base);
  // A 3-layer random model amplifies any 4-bit rounding: NVFP4 is held to Q4_0's error (4.5 bits too).
  quantize(f16, q4, quant::FileType::Q4_0);
  EXPECT_LT(nvfp4_error, 1.5 * relative_rms(logits_of(q4, tokens), base));
  EXPECT_LT(relative_rms(folded, got), 0.5 * nvfp4_error + 0.01);  // the factor survives requantizing
  for (const auto& p : {f16, fp4, q8, q4}) std::filesystem::remove(p);
}

INSTANTIATE_TEST_SUITE_P(Archs, Nvfp4Model, ::testing::Values("llama", "qwen3moe"));

}  // namespace
}  // namespace ridge
