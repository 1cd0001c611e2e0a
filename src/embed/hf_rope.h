#pragma once
// RoPE as Hugging Face transformers computes it for the default rope type, so an encoder matches
// its reference to the last bit of the angle: inv_freq[i] = 1 / base^(2i / d) and the angle
// inv_freq[i] · position both rounded to f32, cos and sin of that angle (tabled once per position),
// and the rotation of the halves (x1, x2) -> (x1·cos - x2·sin, x2·cos + x1·sin) (rotate_half, NeoX).
// model/rope_freqs and kernels/ref/rope build angles llama.cpp's way instead (by repeated products).
#include <cstdint>
#include <vector>

namespace ridge {

class HfRope {
 public:
  HfRope(float base, int64_t head_dim, int64_t n_positions);
  // x: n_heads heads of head_dim values of one token at `position` (< n_positions), in place.
  void apply(float* x, int64_t n_heads, int64_t position) const;

 private:
  int64_t head_dim_, half_;
  std::vector<float> cos_, sin_;  // (n_positions, half)
};

}  // namespace ridge
