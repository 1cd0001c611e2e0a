#pragma once
#include <vector>

#include "kernels/ref/rope.h"
#include "model/model_spec.h"

namespace ridge {

// base^(-2 / rope_dim): how much slower each pair of dimensions turns than the one before.
float rope_theta_scale(const ModelSpec& spec);

// Per-pair divisors of the RoPE angle: GGUF's rope_freqs tensor when the file has one, else
// Llama 3's frequency-dependent scaling computed from the spec, else empty (no divisors).
// Linear scaling is applied to positions instead (RopeArgs::position_scale).
std::vector<float> rope_freq_factors(const ModelSpec& spec, const float* file_factors);

// YaRN's correction dims: the pairs that turn fewer than beta_fast times (low) and beta_slow times
// (high) over the original context, floored / ceiled and clamped to [0, rope_dim - 1]
// (llama.cpp's ggml_rope_yarn_corr_dims).
void yarn_corr_dims(int64_t rope_dim, int64_t original_context, float base, float beta_fast, float beta_slow,
                    float dims[2]);

// DeepSeek's RoPE (deepseek2): the position scaling, YaRN's ramp and magnitude in `args`, and the
// factor of the attention scores (1 / sqrt(qk_nope + qk_rope) times YaRN's mscale squared), as
// llama.cpp computes both from the file's rope.scaling.* keys.
void set_deepseek_rope(const ModelSpec& spec, ref::RopeArgs& args);
float deepseek_scores_scale(const ModelSpec& spec);

}  // namespace ridge
