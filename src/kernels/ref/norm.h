#pragma once
#include <cstdint>

namespace ridge::ref {

// RMSNorm over each of `n_rows` rows of `n` values: out = x / sqrt(mean(x²) + eps) * weight.
// `out` may alias `x`.
void rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out);
// LayerNorm (BERT) over each row: out = (x - mean) / sqrt(var + eps) * weight + bias, mean and the
// (biased) variance summed in double. `out` may alias `x`.
void layer_norm(const float* x, const float* weight, const float* bias, int64_t n_rows, int64_t n, float eps, float* out);

}  // namespace ridge::ref
