// NVFP4 through the whole path: `ridge quantize --type NVFP4` writes each matrix's per-tensor factor
// (one per expert for stacked experts) as "<name>.scale", the loader applies it to the matmul's
// output, and requantizing such a file folds the factor into the weights instead of dropping it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "core/error.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "quant/quantize_model.h"
#include "../model/tiny_arch_spec.h"
#include "tiny_model_runs.h"

namespace ridge {
namespace {

std::string temp_path(const std::string& tag) { return test::temp_gguf("nvfp4", tag); }

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

  const auto base = test::prompt_logits(f16), got = test::prompt_logits(fp4), folded = test::prompt_logits(q8);
  const double nvfp4_error = test::relative_rms(got, base);
  // A 3-layer random model amplifies any 4-bit rounding: NVFP4 is held to Q4_0's error (4.5 bits too).
  quantize(f16, q4, quant::FileType::Q4_0);
  EXPECT_LT(nvfp4_error, 1.5 * test::relative_rms(test::prompt_logits(q4), base));
  EXPECT_LT(test::relative_rms(folded, got), 0.5 * nvfp4_error + 0.01);  // the factor survives requantizing
  for (const auto& p : {f16, fp4, q8, q4}) std::filesystem::remove(p);
}

// A hostile factor (NaN, zero) is refused at load with the tensor's name, not computed with.
TEST(Nvfp4Factors, ABadFactorIsRefusedAtLoad) {
  const std::string f16 = temp_path("bad_f16"), fp4 = temp_path("bad_fp4");
  synth::SynthOptions o;
  o.spec = tiny_spec("llama");
  o.spec.n_ff = 128;
  o.type = DType::F16;
  synth::write_synth_model(o, f16);
  quantize(f16, fp4, quant::FileType::NVFP4);
  uint64_t at = 0;
  {
    const gguf::GgufFile file = gguf::GgufFile::open(fp4);
    at = file.data_offset() + file.find_tensor("blk.1.ffn_up.scale")->offset;
  }
  for (const float bad : {NAN, 0.0f}) {
    std::FILE* f = std::fopen(fp4.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, long(at), SEEK_SET);
    std::fwrite(&bad, 4, 1, f);
    std::fclose(f);
    try {
      load_model(fp4);
      FAIL() << "a factor of " << bad << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("blk.1.ffn_up.scale"), std::string::npos) << e.what();
    }
  }
  for (const auto& p : {f16, fp4}) std::filesystem::remove(p);
}

INSTANTIATE_TEST_SUITE_P(Archs, Nvfp4Model, ::testing::Values("llama", "qwen3moe"));

}  // namespace
}  // namespace ridge
