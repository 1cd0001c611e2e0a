#pragma once
// GeGLU with GELU in its tanh form (Gemma's gelu_pytorch_tanh), exact to a few ulp rather than
// llama.cpp's f16 table (gelu_table.h): gelu(g) = g/2 · (1 + tanh(u)) = g · σ(2u), u = √(2/π)(g +
// 0.044715 g³), and σ as SwiGLU's (swiglu.h) from e = e^-|2u| <= 1 by exp_nonpositive, so the
// AVX-512 version gives the scalar one's bits lane for lane (the tail masked, not looped).
#include <cstdint>

namespace ridge::cpu {

// gate[i] = gelu_tanh(gate[i]) * up[i] over n values: the best version this CPU runs.
void geglu_tanh(float* gate, const float* up, int64_t n);
void geglu_tanh_scalar(float* gate, const float* up, int64_t n);
void geglu_tanh_avx512(float* gate, const float* up, int64_t n);  // AVX-512 CPUs only

namespace geglu_constants {
inline constexpr float kTwoSqrt2OverPi = 1.5957691216057308f;     // 2 √(2/π)
inline constexpr float kCubic = 1.5957691216057308f * 0.044715f;  // 2 √(2/π) · 0.044715
}  // namespace geglu_constants

}  // namespace ridge::cpu
