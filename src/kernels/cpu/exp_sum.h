#pragma once
// Σ exp(x[i] - shift) over a row of logits (the normaliser of a softmax, shift >= every x), with
// the exponential of exp_nonpositive.h (-inf and NaN terms add nothing). Sixteen partial sums in
// double, term i into sum i mod 16, added in order at the end: the AVX-512 kernel gives the bits of
// the scalar one, which is its naive reference.
#include <cstdint>

namespace ridge::cpu {

double exp_sum(const float* x, int64_t n, float shift);          // AVX-512 where the CPU has it
double exp_sum_scalar(const float* x, int64_t n, float shift);   // the arithmetic every lane follows

}  // namespace ridge::cpu
