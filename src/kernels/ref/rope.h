#pragma once
// Rotary position embedding, applied in place to the heads of one or more tokens.
#include <cstdint>

namespace ridge::ref {

struct RopeArgs {
  int64_t n_heads;
  int64_t head_dim;
  int64_t rope_dim;          // rotated dimensions (<= head_dim, even)
  bool neox;                 // pairs (i, i + rope_dim/2) instead of (2i, 2i+1)
  const float* inv_freq;     // (rope_dim / 2) angle per position for each pair
  float position_scale = 1;  // linear scaling: angle = position * position_scale * inv_freq
};

// x: (n_tokens, n_heads, head_dim); positions: (n_tokens).
void rope(const RopeArgs& args, const int32_t* positions, int64_t n_tokens, float* x);

}  // namespace ridge::ref
