#pragma once
#include <cstdint>

namespace ridge::ref {

// SwiGLU: gate[i] = silu(gate[i]) * up[i], in place over n values.
void swiglu(float* gate, const float* up, int64_t n);

// GeGLU: gate[i] = gelu(gate[i]) * up[i], GELU in its tanh approximation (Gemma's gelu_pytorch_tanh).
void geglu(float* gate, const float* up, int64_t n);

// GELU in its exact form (BERT's "gelu"): x = x / 2 * (1 + erf(x / sqrt 2)), in place over n values.
void gelu_erf(float* x, int64_t n);
// Softmax of each of n_rows rows of n values, in place (max subtracted, sum in double).
void softmax(float* x, int64_t n_rows, int64_t n);

// x = c * tanh(x / c) over n values (logit soft-capping).
void softcap(float* x, int64_t n, float c);

}  // namespace ridge::ref
