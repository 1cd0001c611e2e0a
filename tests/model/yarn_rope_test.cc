// DeepSeek's YaRN RoPE as llama.cpp runs it, against the formula of the Hugging Face
// implementation (DeepseekV2YarnRotaryEmbedding) computed in double: the ramp between extrapolated
// and interpolated pairs, the correction dims, the magnitude of cos and sin, and the scores' scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/ref/rope.h"
#include "model/rope_freqs.h"

namespace ridge {
namespace {

ModelSpec deepseek_spec(float mscale_all_dim) {
  ModelSpec s;
  s.arch = "deepseek2";
  s.rope_dim = s.qk_rope_head_dim = 64;
  s.qk_nope_head_dim = 128;
  s.rope_theta = 10000.0f;
  s.rope_scaling.type = RopeScaling::Type::Yarn;
  s.rope_scaling.factor = 40.0f;
  s.rope_scaling.original_context = 4096;
  s.rope_scaling.yarn_log_multiplier = mscale_all_dim;
  return s;
}

double hf_mscale(double factor, double mscale) { return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0; }

// HF: inv_freq = interpolated * (1 - mask) + extrapolated * mask, mask = 1 - linear_ramp(low, high).
std::vector<double> hf_inv_freq(const ModelSpec& s) {
  const double dim = double(s.rope_dim), base = s.rope_theta, factor = s.rope_scaling.factor;
  const double orig = double(s.rope_scaling.original_context);
  auto corr = [&](double rotations) { return dim * std::log(orig / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base)); };
  const double low = std::max(std::floor(corr(s.rope_scaling.yarn_beta_fast)), 0.0);
  double high = std::min(std::ceil(corr(s.rope_scaling.yarn_beta_slow)), dim - 1);
  if (low == high) high += 0.001;
  std::vector<double> inv(size_t(s.rope_dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) {
    const double extrapolated = std::pow(base, -2.0 * double(i) / dim), interpolated = extrapolated / factor;
    const double mask = 1.0 - std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    inv[i] = interpolated * (1 - mask) + extrapolated * mask;
  }
  return inv;
}

TEST(YarnRope, CorrectionDimsAreDeepSeeksRamp) {
  float dims[2];
  yarn_corr_dims(64, 4096, 10000.0f, 32.0f, 1.0f, dims);
  // 64 ln(4096 / 64π) / 2 ln 10^4 = 10.47, and 64 ln(4096 / 2π) / 2 ln 10^4 = 22.5.
  EXPECT_EQ(dims[0], 10.0f);
  EXPECT_EQ(dims[1], 23.0f);
  yarn_corr_dims(16, 64, 10000.0f, 32.0f, 1.0f, dims);  // a context too short to rotate: clamped
  EXPECT_EQ(dims[0], 0.0f);
  EXPECT_GE(dims[1], 0.0f);
}

TEST(YarnRope, RotationMatchesTheDirectFormula) {
  for (float mscale_all_dim : {0.707f, 1.0f, 0.0f}) {
    const ModelSpec s = deepseek_spec(mscale_all_dim);
    ref::RopeArgs args{3, 80, s.rope_dim, false, rope_theta_scale(s), nullptr};
    set_deepseek_rope(s, args);
    // HF scales cos and sin by mscale / mscale_all_dim (1 for DeepSeek, whose two are equal), or
    // by mscale(factor, 1) when the model has no mscale_all_dim.
    const double factor = s.rope_scaling.factor;
    const double magnitude = mscale_all_dim != 0.0f ? 1.0 : hf_mscale(factor, 1.0);
    const std::vector<double> inv = hf_inv_freq(s);
    const std::vector<int32_t> positions = {0, 1, 7, 100, 3000};
    std::vector<float> x(positions.size() * 3 * 80);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.37 * double(i)) * 2.0);
    const std::vector<float> input = x;
    ref::rope(args, positions.data(), int64_t(positions.size()), x.data());
    for (size_t t = 0; t < positions.size(); ++t)
      for (int h = 0; h < 3; ++h) {
        const size_t base = (t * 3 + size_t(h)) * 80;
        for (size_t i = 0; i < inv.size(); ++i) {
          const double angle = double(positions[t]) * inv[i], a = input[base + 2 * i], b = input[base + 2 * i + 1];
          const double want0 = (a * std::cos(angle) - b * std::sin(angle)) * magnitude;
          const double want1 = (a * std::sin(angle) + b * std::cos(angle)) * magnitude;
          ASSERT_NEAR(x[base + 2 * i], want0, 2e-3) << "mscale_all_dim " << mscale_all_dim << " pos " << positions[t] << " pair " << i;
          ASSERT_NEAR(x[base + 2 * i + 1], want1, 2e-3);
        }
        for (size_t d = size_t(s.rope_dim); d < 80; ++d) ASSERT_EQ(x[base + d], input[base + d]);  // past rope_dim
      }
  }
}

TEST(YarnRope, ScoresScaleIsMscaleSquaredOverTheHeadWidth) {
  // DeepSeek-V2-Lite: mscale_all_dim 0.707 -> softmax_scale = mscale(40, 0.707)² / sqrt(192).
  const double v2_lite = std::pow(hf_mscale(40.0, 0.707), 2) / std::sqrt(192.0);
  EXPECT_NEAR(deepseek_scores_scale(deepseek_spec(0.707f)), v2_lite, 1e-6 * v2_lite);
  const double v3 = std::pow(hf_mscale(40.0, 1.0), 2) / std::sqrt(192.0);
  EXPECT_NEAR(deepseek_scores_scale(deepseek_spec(1.0f)), v3, 1e-6 * v3);
  ModelSpec plain = deepseek_spec(0.0f);
  plain.rope_scaling.type = RopeScaling::Type::None;
  EXPECT_FLOAT_EQ(deepseek_scores_scale(plain), 1.0f / std::sqrt(192.0f));
  ref::RopeArgs args{1, 64, 64, false, rope_theta_scale(plain), nullptr};
  set_deepseek_rope(plain, args);
  EXPECT_EQ(args.ext_factor, 0.0f);
  EXPECT_EQ(args.mscale, 1.0f);
  EXPECT_EQ(args.position_scale, 1.0f);
}

}  // namespace
}  // namespace ridge
