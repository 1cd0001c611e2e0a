#include "model/rope_freqs.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ridge {

float rope_theta_scale(const ModelSpec& spec) { return std::pow(spec.rope_theta, -2.0f / float(spec.rope_dim)); }

std::vector<float> rope_freq_factors(const ModelSpec& spec, const float* file_factors) {
  const int64_t half = spec.rope_dim / 2;
  if (file_factors) return std::vector<float>(file_factors, file_factors + half);
  const auto& scaling = spec.rope_scaling;
  if (scaling.type != RopeScaling::Type::Llama3) return {};
  // Long wavelengths are slowed by `factor`, short ones kept, the band between interpolated.
  std::vector<float> factors(static_cast<size_t>(half));
  const double low_freq_wavelen = double(scaling.original_context) / scaling.low_freq_factor;
  const double high_freq_wavelen = double(scaling.original_context) / scaling.high_freq_factor;
  for (int64_t i = 0; i < half; ++i) {
    const double freq = std::pow(double(spec.rope_theta), -2.0 * double(i) / double(spec.rope_dim));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double scaled = freq;
    if (wavelen > low_freq_wavelen) {
      scaled = freq / scaling.factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (double(scaling.original_context) / wavelen - scaling.low_freq_factor) /
                            (scaling.high_freq_factor - scaling.low_freq_factor);
      scaled = (1.0 - smooth) * freq / scaling.factor + smooth * freq;
    }
    factors[size_t(i)] = float(freq / scaled);
  }
  return factors;
}

namespace {

// llama.cpp's context setup for rope scaling (llama-context.cpp): the interpolation factor, whether
// YaRN extrapolates, and the attn_factor it passes to every RoPE.
struct DeepseekRope {
  float freq_scale = 1.0f, ext_factor = 0.0f, attn_factor = 1.0f;
};

DeepseekRope deepseek_rope(const ModelSpec& spec) {
  const RopeScaling& r = spec.rope_scaling;
  DeepseekRope d;
  if (r.type != RopeScaling::Type::None && r.factor != 0.0f) d.freq_scale = 1.0f / r.factor;
  if (r.type == RopeScaling::Type::Yarn) {
    d.ext_factor = 1.0f;
    // With a log multiplier llama.cpp's ratio of mscales is 1 (DeepSeek-V2's mscale equals its
    // mscale_all_dim); then RoPE's own (1 + 0.1 ln factor) is cancelled, to be applied in the scores.
    const float factor = 1.0f / d.freq_scale;
    const float mscale = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;
    d.attn_factor = r.yarn_log_multiplier != 0.0f ? 1.0f : mscale;
    d.attn_factor *= 1.0f / (1.0f + 0.1f * std::log(factor));
  }
  d.attn_factor *= r.attn_factor;
  return d;
}

}  // namespace

void yarn_corr_dims(int64_t rope_dim, int64_t original_context, float base, float beta_fast, float beta_slow,
                    float dims[2]) {
  auto corr_dim = [&](float rotations) {
    return float(rope_dim) * std::log(float(original_context) / (rotations * 2 * std::numbers::pi_v<float>)) /
           (2 * std::log(base));
  };
  dims[0] = std::max(0.0f, std::floor(corr_dim(beta_fast)));
  dims[1] = std::min(float(rope_dim - 1), std::ceil(corr_dim(beta_slow)));
}

void set_deepseek_rope(const ModelSpec& spec, ref::RopeArgs& args) {
  const DeepseekRope d = deepseek_rope(spec);
  args.position_scale = d.freq_scale;
  args.ext_factor = d.ext_factor;
  args.mscale = d.attn_factor;
  float dims[2];
  const RopeScaling& r = spec.rope_scaling;
  yarn_corr_dims(spec.rope_dim, r.original_context, spec.rope_theta, r.yarn_beta_fast, r.yarn_beta_slow, dims);
  args.corr_low = dims[0];
  args.corr_high = dims[1];
}

float deepseek_scores_scale(const ModelSpec& spec) {
  const DeepseekRope d = deepseek_rope(spec);
  // deepseek2.cpp: undo the cancellation above, then mscale = (1 + 0.1 * log_mul * ln factor).
  const float attn_factor_org = d.attn_factor * (1.0f + 0.1f * std::log(1.0f / d.freq_scale));
  const float mscale = attn_factor_org * (1.0f + 0.1f * spec.rope_scaling.yarn_log_multiplier * std::log(1.0f / d.freq_scale));
  return mscale * mscale / std::sqrt(float(spec.qk_nope_head_dim + spec.qk_rope_head_dim));
}

}  // namespace ridge
