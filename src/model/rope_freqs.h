#pragma once
#include <vector>

#include "model/model_spec.h"

namespace ridge {

// Per-pair RoPE angle rate: base^(-2i/rope_dim), divided by the per-pair factors when given
// (GGUF's rope_freqs tensor) or by Llama 3's frequency-dependent scaling from the spec.
// Linear scaling is applied to positions instead (RopeArgs::position_scale).
std::vector<float> rope_inv_freq(const ModelSpec& spec, const float* freq_factors);

}  // namespace ridge
