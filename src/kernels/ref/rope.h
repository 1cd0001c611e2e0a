#pragma once
// Rotary position embedding, applied in place to the heads of one or more tokens.
#include <cstdint>

namespace ridge::ref {

struct RopeArgs {
  int64_t n_heads;
  int64_t head_dim;
  int64_t rope_dim;              // rotated dimensions (<= head_dim, even)
  bool neox;                     // pairs (i, i + rope_dim/2) instead of (2i, 2i+1)
  float theta_scale;             // base^(-2/rope_dim): pair i turns at position * theta_scale^i
  const float* freq_factors;     // optional (rope_dim / 2) divisors of each pair's angle (Llama 3 scaling)
  float position_scale = 1.0f;   // linear scaling: angles multiplied by it (YaRN: the interpolated angle)
  // YaRN (llama.cpp's rope_yarn): with ext_factor > 0, pair i's angle is the interpolated angle
  // (times position_scale) mixed with the unscaled one by ramp(i) * ext_factor, where ramp falls
  // from 1 to 0 between the correction dims; cos and sin are then multiplied by
  // mscale * (1 + 0.1 ln(1 / position_scale)). mscale also applies without YaRN.
  float ext_factor = 0.0f;
  float corr_low = 0.0f, corr_high = 0.0f;
  float mscale = 1.0f;
};

// x: (n_tokens, n_heads, head_dim); positions: (n_tokens).
// Angles are built as llama.cpp builds them (theta *= theta_scale, pair by pair, in f32), so the
// rotation is bit-for-bit the one the reference engine applies.
void rope(const RopeArgs& args, const int32_t* positions, int64_t n_tokens, float* x);

}  // namespace ridge::ref
