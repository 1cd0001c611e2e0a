// The planner's inputs and outputs: formats, the catalogue, hardware files and the probe profile,
// lint findings, the SVG plot and the report's JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "plan/hardware.h"
#include "plan/lint.h"
#include "plan/model_catalog.h"
#include "plan/plan_report.h"
#include "plan/svg_roofline.h"
#include "plan/validate.h"

namespace ridge::plan {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("ridge_plan_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(NumberFormats, BitsIncludeBlockScales) {
  EXPECT_DOUBLE_EQ(number_format("nvfp4").bits, 4.5);   // FP8 scale per 16 values
  EXPECT_DOUBLE_EQ(number_format("mxfp4").bits, 4.25);  // E8M0 scale per 32
  EXPECT_DOUBLE_EQ(number_format("q4_1").bits, 5.0);    // 20 bytes per 32 values, from core/dtype
  EXPECT_DOUBLE_EQ(number_format("Q4_K").bits, 4.5);
  EXPECT_DOUBLE_EQ(number_format("q8_0").bits, 8.5);
  EXPECT_TRUE(number_format("int4").weight_only);
  EXPECT_EQ(gemm_compute(number_format("int4"), number_format("bf16")), ComputeClass::BF16);
  EXPECT_EQ(gemm_compute(number_format("fp8"), number_format("bf16")), ComputeClass::FP8);
  EXPECT_THROW(number_format("fp3"), Error);
}

TEST(Catalogue, EveryNamedShapeIsValid) {
  for (const auto& name : {"llama-3-8b", "llama-3-70b", "llama-3.2-1b", "tinyllama-1.1b", "smollm2-135m", "deepseek-v3", "qwen2-7b"}) {
    auto spec = named_model_spec(name);
    ASSERT_TRUE(spec) << name;
    EXPECT_NO_THROW(validate(*spec)) << name;
  }
  EXPECT_FALSE(named_model_spec("gpt-17"));
  EXPECT_NEAR(param_count(*named_model_spec("llama-3-8b")).total() / 1e9, 8.03, 0.01);
  EXPECT_NEAR(param_count(*named_model_spec("tinyllama-1.1b")).total() / 1e9, 1.10, 0.01);
  EXPECT_NEAR(param_count(*named_model_spec("smollm2-135m")).total() / 1e6, 134.5, 0.5);
  EXPECT_NEAR(param_count(*named_model_spec("qwen2-7b")).total() / 1e9, 7.6, 0.05);
}

TEST(Catalogue, ValidateRejectsHalfSetExperts) {
  ModelSpec s = *named_model_spec("llama-3-8b");
  s.n_expert_used = 2;  // experts used but none to choose from
  EXPECT_THROW(validate(s), Error);
  s = *named_model_spec("deepseek-v3");
  s.qk_rope_head_dim = 0;
  EXPECT_THROW(validate(s), Error);
}

TEST(Hardware, UserFileAndLookup) {
  const std::string path = write_temp("hw.json", R"({"hardware": [{"name": "MI300X", "memory_gb": 192,
      "bandwidth_tbs": 5.3, "bf16_tflops": 1307, "fp8_tflops": 2615, "interconnect_gbs": 448, "price_per_hour": 3.5}]})");
  const auto extra = read_hardware_file(path);
  ASSERT_EQ(extra.size(), 1u);
  const HardwareSpec h = find_hardware("mi300x", extra);
  EXPECT_DOUBLE_EQ(h.memory_bw, 5.3e12);
  EXPECT_NEAR(h.balance(ComputeClass::BF16), 246.6, 0.1);
  EXPECT_EQ(h.peak(ComputeClass::FP4), h.peak(ComputeClass::FP8));  // no FP4: runs at FP8
  EXPECT_DOUBLE_EQ(*h.price_per_hour, 3.5);
  EXPECT_EQ(find_hardware("gb300").name, "GB300");
  EXPECT_THROW(find_hardware("tpu-v9"), Error);
  std::filesystem::remove(path);
}

TEST(Hardware, ProbeProfile) {
  const std::string path = write_temp("machine.json", R"({"cpu": "Test CPU", "cores": 2,
      "read_bandwidth_gbs": {"1": 10, "2": 18}, "peak_f32_gflops": {"1": 100, "2": 190},
      "peak_int8_gops": {"1": 400, "2": 780}, "l1d_kib": 48, "l2_kib": 2048, "l3_kib": 32768,
      "isa": ["avx2", "avx512f"], "memory_gib": 16})");
  const HardwareSpec all = hardware_from_probe_profile(path);
  EXPECT_EQ(all.kind, "cpu");
  EXPECT_EQ(all.threads, 2);
  EXPECT_DOUBLE_EQ(all.memory_bw, 18e9);
  EXPECT_DOUBLE_EQ(all.peak(ComputeClass::F32), 190e9);
  EXPECT_DOUBLE_EQ(all.peak(ComputeClass::INT8), 780e9);
  EXPECT_DOUBLE_EQ(all.peak(ComputeClass::BF16), 190e9);  // no bf16 units measured: f32
  EXPECT_DOUBLE_EQ(all.memory_bytes, 16.0 * 1024 * 1024 * 1024);
  const HardwareSpec one = hardware_from_probe_profile(path, 1);
  EXPECT_DOUBLE_EQ(one.memory_bw, 10e9);
  std::filesystem::remove(path);
  try {
    hardware_from_probe_profile(path);
    FAIL() << "a missing profile must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run ridge probe first"), std::string::npos);
  }
}

TEST(Lint, FindsMisalignedAndSkinnyShapes) {
  ModelSpec s = *named_model_spec("smollm2-135m");  // H 576 = 4.5 x 128, 30 layers
  auto level_of = [&](const std::string& check) {
    for (const auto& f : lint_model(s))
      if (f.check == check) return f.level;
    ADD_FAILURE() << "no check " << check;
    return LintLevel::Ok;
  };
  EXPECT_EQ(level_of("align.n_embd"), LintLevel::Warn);
  EXPECT_EQ(level_of("width_vs_depth"), LintLevel::Warn);  // 576 / 30 = 19
  EXPECT_EQ(level_of("pipeline"), LintLevel::Warn);        // 30 layers: no 4 equal stages
  s = *named_model_spec("llama-3-70b");
  EXPECT_EQ(level_of("align.n_embd"), LintLevel::Ok);
  EXPECT_EQ(level_of("pipeline"), LintLevel::Ok);
  EXPECT_EQ(level_of("shape.ffn_down"), LintLevel::Ok);
  s.n_ff = 512;  // the second seed's deliberately small H'
  EXPECT_EQ(level_of("shape.ffn_down"), LintLevel::Warn);
}

TEST(Report, JsonSectionsAndSvg) {
  PlanInputs in;
  in.spec = *named_model_spec("deepseek-v3");
  in.precision.weights = in.precision.embeddings = number_format("fp8");
  in.hw = find_hardware("H200");
  PlanModel model{in.spec, "catalogue", std::nullopt, ""};
  PlanOptions o;
  o.price_per_hour = 3.0;
  const PlanReport r = build_plan_report(in, model, o);
  for (const char* key : {"model", "hardware", "decode", "kv", "prefill", "ops", "cost", "slo", "quant", "parallel", "moe",
                          "disagg", "speculative", "gemm"})
    EXPECT_TRUE(r.json.contains(key)) << key;
  EXPECT_NE(r.text.find("## Decode versus batch"), std::string::npos);
  o.sections = {"kv"};
  EXPECT_EQ(build_plan_report(in, model, o).json.size(), 1u);

  const std::string svg = roofline_svg(in.hw, roofline_points(in, o), "deepseek-v3 <on> H200");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;on&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<circle"), std::string::npos);
  EXPECT_NE(svg.find("fp8"), std::string::npos);
}

TEST(Validate, FittedOverheadsCloseBothGaps) {
  const Measured prefill{0.010, 0.010 + 0.002 + 64 * 0.001};  // 2 ms per step, 1 ms per token
  const Measured decode{0.004, 0.004 + 0.002 + 0.001};
  const Overheads o = fit_overheads(prefill, 64, decode);
  EXPECT_NEAR(o.per_step_s, 0.002, 1e-12);
  EXPECT_NEAR(o.per_token_s, 0.001, 1e-12);
  // Faster than predicted: no negative overheads.
  const Overheads none = fit_overheads({0.01, 0.005}, 64, {0.01, 0.005});
  EXPECT_EQ(none.per_step_s, 0);
  EXPECT_EQ(none.per_token_s, 0);
}

}  // namespace
}  // namespace ridge::plan
