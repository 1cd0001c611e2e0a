#pragma once
// GELU in its exact (erf) form, BERT's "gelu", fast: erf by Abramowitz & Stegun 7.1.26 (absolute
// error below 1.5e-7) around exp_nonpositive(-x²/2), sixteen lanes at a time on AVX-512. The
// scalar and vector versions do the same operations in the same order. ref::gelu_erf (std::erf) is
// the reference.
#include <cstdint>

namespace ridge::cpu {

void gelu_erf(float* x, int64_t n);  // in place; the best version this CPU runs
void gelu_erf_scalar(float* x, int64_t n);
void gelu_erf_avx512(float* x, int64_t n);  // AVX-512 CPUs only

namespace gelu_constants {
inline constexpr float kP = 0.3275911f;
inline constexpr float kA1 = 0.254829592f, kA2 = -0.284496736f, kA3 = 1.421413741f, kA4 = -1.453152027f,
                       kA5 = 1.061405429f;
inline constexpr float kInvSqrt2 = 0.70710678118654752f;
}  // namespace gelu_constants

}  // namespace ridge::cpu
