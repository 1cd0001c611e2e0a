// The worked numbers of the two seed documents, reproduced from model and hardware descriptions.
// Each test states the seed's assumptions as inputs; tolerances are the precision the seed prints.
#include <gtest/gtest.h>

#include "plan/gemm_shapes.h"
#include "plan/model_catalog.h"
#include "plan/scaling.h"
#include "plan/serving.h"

namespace ridge::plan {
namespace {

constexpr double kKiB = 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelSpec named(const char* name) {
  auto spec = named_model_spec(name);
  EXPECT_TRUE(spec.has_value()) << name;
  return *spec;
}

// Llama-3-70B with every matrix and the KV cache in FP8 (E4M3), on one H100 SXM: the first seed's
// "70B FP8" setting.
PlanInputs llama70b_fp8_h100() {
  PlanInputs in;
  in.spec = named("llama-3-70b");
  in.precision.weights = in.precision.embeddings = number_format("fp8");
  in.precision.kv = number_format("fp8");
  in.hw = find_hardware("H100 SXM");
  return in;
}

TEST(SeedOne, H100MachineBalance) {
  const HardwareSpec h100 = find_hardware("h100");
  EXPECT_NEAR(h100.balance(ComputeClass::BF16), 295, 0.5);  // 989e12 / 3.35e12
  EXPECT_NEAR(h100.balance(ComputeClass::FP8), 590, 1.0);   // 1979e12 / 3.35e12
}

TEST(SeedOne, H200IsADecodeUpgrade) {
  const HardwareSpec h100 = find_hardware("H100 SXM"), h200 = find_hardware("H200 SXM");
  EXPECT_NEAR(h200.memory_bw / h100.memory_bw, 1.43, 0.005);   // +43% bandwidth
  EXPECT_NEAR(h200.memory_bytes / h100.memory_bytes, 1.76, 0.005);  // +76% capacity
  EXPECT_EQ(h200.peak(ComputeClass::FP8), h100.peak(ComputeClass::FP8));
}

TEST(SeedOne, SingleStreamCeiling70bFp8) {
  const PlanInputs in = llama70b_fp8_h100();
  const DecodePoint p = decode_point(in, 1, 0);  // weights only: "3.35 TB/s / 70 GB"
  EXPECT_NEAR(p.tok_s_total(), 48, 0.5);
  EXPECT_NEAR(p.cost.flops() / 1e9, 140, 2);                 // 2 x 70e9 FLOPs per token
  EXPECT_NEAR(p.cost.flops() / p.cost.bytes(), 2.0, 0.05);   // arithmetic intensity
  // 48 tok/s x 140 GFLOP = 6.7 TFLOPS, 0.3% of FP8 peak.
  const double utilisation = p.tok_s_total() * p.cost.flops() / in.hw.peak(ComputeClass::FP8);
  EXPECT_NEAR(utilisation * 100, 0.34, 0.02);
}

// "Decode turns compute-bound near B = balance / 2: about 150 sequences at BF16, 300 at FP8" --
// the seed's 2B FLOPs per weight byte assumes one byte per parameter with either math rate, and
// ignores activation traffic (which moves the model's answer up by a few percent).
TEST(SeedOne, DecodeTurnsComputeBoundNearHalfTheBalance) {
  PlanInputs in = llama70b_fp8_h100();
  in.precision.activations = number_format("fp8");
  EXPECT_NEAR(double(decode_crossover_batch(in, 0)), 300, 30);
  in.precision.weights = in.precision.embeddings = NumberFormat{"8-bit, bf16 math", 8, ComputeClass::BF16, true};
  in.precision.activations = number_format("bf16");
  EXPECT_NEAR(double(decode_crossover_batch(in, 0)), 150, 15);
}

TEST(SeedOne, PrefillIntensity) {
  const PlanInputs in = llama70b_fp8_h100();
  const PrefillPoint p = prefill_point(in, 1000);
  // "about 2N FLOPs/byte: a 1,000-token prompt is ~3.4x the FP8 balance, ~7x the BF16 balance".
  EXPECT_NEAR(p.weight_intensity() / in.hw.balance(ComputeClass::FP8), 3.4, 0.1);
  EXPECT_NEAR(p.weight_intensity() / in.hw.balance(ComputeClass::BF16), 7, 0.35);
  EXPECT_FALSE(p.time.memory_bound());
}

TEST(SeedOne, Llama3_70bKvLedger) {
  PlanInputs in;
  in.spec = named("llama-3-70b");
  in.precision.kv = number_format("bf16");
  // 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 320 KiB per token; 128K tokens = 40 GiB.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(in.spec, in.precision.kv), 320 * kKiB);
  in.hw = find_hardware("H100 SXM");
  const KvLedger k = kv_ledger(in, 128 * 1024);
  EXPECT_DOUBLE_EQ(k.bytes_per_sequence, 40 * kGiB);
  EXPECT_NEAR(k.bytes_per_sequence / in.hw.memory_bytes, 0.5, 0.04);  // "half an H100"
  // FP8 KV halves it: the batch table's 160 KiB per token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(in.spec, number_format("fp8")), 160 * kKiB);
}

// The seed's own script: W = 70e9 bytes, KV_TOK = 160e3 bytes, 2 x 70e9 FLOPs per token, 8K context.
TEST(SeedOne, BatchTableFromTheSeedsAssumptions) {
  const HardwareSpec h100 = find_hardware("H100 SXM");
  const DecodeTotals seed{.weight_bytes = 70e9, .kv_bytes_per_token = 160e3, .flops_per_token = 2 * 70e9};
  const struct {
    int64_t batch;
    double total, per_stream;
  } table[] = {{1, 47, 47.0}, {8, 333, 41.6}, {32, 958, 29.9}, {128, 1803, 14.1}};
  for (const auto& row : table) {
    const double t = closed_form_step_seconds(seed, row.batch, 8192, h100.memory_bw, h100.peak(ComputeClass::FP8));
    EXPECT_NEAR(double(row.batch) / t, row.total, 0.5) << "batch " << row.batch;
    EXPECT_NEAR(1.0 / t, row.per_stream, 0.05) << "batch " << row.batch;
  }
}

// The same table from the Llama-3-70B shapes: real parameter count (70.6e9), KV of 160 KiB, the
// activations GEMMs read and write. "About" the seed's numbers: within 3%.
TEST(SeedOne, BatchTableFromTheModel) {
  const PlanInputs in = llama70b_fp8_h100();
  const struct {
    int64_t batch;
    double total;
  } table[] = {{1, 47}, {8, 333}, {32, 958}, {128, 1803}};
  for (const auto& row : table) {
    const DecodePoint p = decode_point(in, row.batch, 8192);
    EXPECT_NEAR(p.tok_s_total() / row.total, 1.0, 0.03) << "batch " << row.batch;
    EXPECT_TRUE(p.time.memory_bound());
  }
}

TEST(SeedOne, CostPerMillionTokens) {
  // "$2/hour: about $12 per million output tokens at batch 1, about $0.31 at batch 128".
  EXPECT_NEAR(cost_per_million_tokens(2.0, 47), 12, 0.5);
  EXPECT_NEAR(cost_per_million_tokens(2.0, 1803), 0.31, 0.005);
  const PlanInputs in = llama70b_fp8_h100();
  EXPECT_NEAR(cost_per_million_tokens(2.0, decode_point(in, 1, 8192).tok_s_total()), 12, 0.5);
}

TEST(SeedOne, QuantizationTable) {
  PlanInputs in;
  in.spec = named("llama-3-70b");
  in.hw = find_hardware("H100 SXM");
  const std::vector<NumberFormat> formats = {number_format("bf16"), number_format("fp8"), number_format("int4")};
  const auto rows = quantization_table(in, formats);
  ASSERT_EQ(rows.size(), 3u);
  const struct {
    double gb;
    int64_t gpus;
    double ceiling;
  } seed[] = {{140, 2, 24}, {70, 1, 48}, {35, 1, 96}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(rows[i].weight_bytes / 1e9 / seed[i].gb, 1.0, 0.015) << rows[i].format.name;
    EXPECT_EQ(rows[i].devices_needed, seed[i].gpus) << rows[i].format.name;
    EXPECT_NEAR(rows[i].ceiling_tok_s, seed[i].ceiling, seed[i].ceiling * 0.01) << rows[i].format.name;
  }
  // FP4 on B200: about twice the FP8 ceiling.
  in.hw = find_hardware("B200");
  const auto b200 = quantization_table(in, {number_format("fp8"), number_format("fp4")});
  EXPECT_NEAR(b200[1].ceiling_tok_s / b200[0].ceiling_tok_s, 2.0, 0.02);
}

TEST(SeedOne, DeepSeekV3ActiveParameters) {
  const ModelSpec ds = named("deepseek-v3");
  const ParamCount c = param_count(ds);
  EXPECT_NEAR(c.total() / 1e9, 671, 3);   // 671B total
  EXPECT_NEAR(c.active() / 1e9, 37, 1);   // ~37B active (1 shared + 8 of 256 routed)
  PlanInputs in;
  in.spec = ds;
  in.precision.weights = in.precision.embeddings = number_format("fp8");
  in.hw = find_hardware("H100 SXM");
  // "Dense 671B, FP8: 671 GB per token -> ~5 tok/s ceiling on H100 BW".
  EXPECT_NEAR(in.hw.memory_bw / weight_bytes(ds, in.precision), 5, 0.05);
  // "~37 GB of expert + shared weights per token" at batch 1.
  EXPECT_NEAR(decode_point(in, 1, 0).cost.weight_bytes() / 1e9, 37, 1);
}

TEST(SeedTwo, MoeGemmM) {
  // DeepSeek-R1: top-8 of 256 experts. 4096 tokens in flight give each expert a GEMM-M of 128.
  EXPECT_DOUBLE_EQ(moe_gemm_m(4096, 8, 256), 128);
}

// GB300, FFN-2 with a deliberately small H' = 512 and H = 8192: NVFP4 inputs and weights (4-bit
// values plus an FP8 scale per 16), FP8 output.
TEST(SeedTwo, Gb300GemmTimingTable) {
  const HardwareSpec gb300 = find_hardware("GB300");
  GemmFormats f{number_format("nvfp4"), number_format("nvfp4"), number_format("fp8")};
  const struct {
    int64_t m;
    double math_us, read_us, write_us;
    double tol_math, tol_read, tol_write;  // one unit in the seed's last digit
  } table[] = {
      {256, 0.14, 0.30, 0.26, 0.01, 0.01, 0.01},
      {2048, 1.15, 0.37, 2.10, 0.01, 0.01, 0.01},
      {16384, 9.16, 0.89, 16.8, 0.01, 0.01, 0.1},
  };
  ModelSpec spec = named("llama-3-8b");
  spec.n_embd = 8192;
  spec.n_ff = 512;
  for (const auto& row : table) {
    GemmShape down;
    for (const auto& g : model_gemm_shapes(spec, row.m, f, gb300))
      if (g.name == "ffn_down") down = g;
    EXPECT_EQ(down.n, 8192);
    EXPECT_EQ(down.k, 512);
    EXPECT_NEAR(down.math_s * 1e6, row.math_us, row.tol_math) << "M " << row.m;
    EXPECT_NEAR(down.read_s * 1e6, row.read_us, row.tol_read) << "M " << row.m;
    EXPECT_NEAR(down.write_s * 1e6, row.write_us, row.tol_write) << "M " << row.m;
    EXPECT_TRUE(down.memory_bound()) << "M " << row.m;
  }
}

TEST(SeedTwo, TileQuantization) {
  EXPECT_DOUBLE_EQ(tile_waste(8192, 512), 0.0);
  EXPECT_NEAR(tile_waste(8200, 128), 1.0 - 8200.0 / 8320.0, 1e-12);
  EXPECT_GT(tile_waste(5632 + 128, 512), tile_waste(5632 + 128, 128));
}

}  // namespace
}  // namespace ridge::plan
