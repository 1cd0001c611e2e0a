#pragma once
#include <vector>

#include "model/model_spec.h"

namespace ridge {

// base^(-2 / rope_dim): how much slower each pair of dimensions turns than the one before.
float rope_theta_scale(const ModelSpec& spec);

// Per-pair divisors of the RoPE angle: GGUF's rope_freqs tensor when the file has one, else
// Llama 3's frequency-dependent scaling computed from the spec, else empty (no divisors).
// Linear scaling is applied to positions instead (RopeArgs::position_scale).
std::vector<float> rope_freq_factors(const ModelSpec& spec, const float* file_factors);

}  // namespace ridge
