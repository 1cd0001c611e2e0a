#pragma once
// SwiGLU, gate[i] = silu(gate[i]) * up[i], with the exponential of exp_nonpositive.h so the
// AVX-512 version gives the scalar one's bits lane for lane (and a thread count, a batch or the
// fused matmul prologue never change them). silu(g) = g·σ(g) with σ from e = e^-|g| <= 1:
// g / (1 + e) for g >= 0, g·e / (1 + e) below; within a few ulp of g / (1 + e^-g) (ref::swiglu).
#include <cstdint>

namespace ridge::cpu {

// The AVX-512 or AVX2 kernel where the CPU has one, else ref::swiglu (std::exp: faster than the scalar form).
void swiglu(float* gate, const float* up, int64_t n);

// The scalar arithmetic every lane follows: the naive reference of the vector kernels.
void swiglu_scalar(float* gate, const float* up, int64_t n);
void swiglu_avx2(float* gate, const float* up, int64_t n);    // AVX2 + FMA CPUs only
void swiglu_avx512(float* gate, const float* up, int64_t n);  // AVX-512 CPUs only

}  // namespace ridge::cpu
