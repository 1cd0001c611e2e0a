#pragma once
// e^x for x <= 0 (softmax's exp(score - max)), in plain IEEE multiplies and adds so that a vector
// version (exp_nonpositive_avx512.h) gives the same bits lane for lane: Cody-Waite reduction
// x = n·ln2 + r with ln2 split so n·ln2_hi is exact, a degree-7 polynomial for e^r on
// |r| <= ln2/2 (Cephes' expf coefficients, about 1 ulp), then the power of two put into the
// exponent. Below -87.3 (and for -inf or NaN) the result is 0: a probability of at most 1e-38.
// Callers compile it without contracting a multiply into an add (fp-contract=off).
#include <bit>
#include <cmath>
#include <cstdint>

namespace ridge::cpu {

namespace exp_constants {
inline constexpr float kMin = -87.3f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 · 2^23
inline constexpr float kLn2Hi = 0.693359375f;         // 9 significant bits: n · kLn2Hi is exact
inline constexpr float kLn2Lo = -2.12194440e-4f;      // ln 2 - kLn2Hi
inline constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
}  // namespace exp_constants

inline float exp_nonpositive(float x) {
  using namespace exp_constants;
  if (!(x > kMin)) return 0.0f;
  // Round to nearest even by adding and subtracting 1.5·2^23 (exact for |x·log2e| < 2^22): no
  // library call where the baseline ISA has no rounding instruction, the vector roundscale's result.
  const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float y = kP0 * r + kP1;
  y = y * r + kP2;
  y = y * r + kP3;
  y = y * r + kP4;
  y = y * r + kP5;
  y = y * (r * r) + r;
  y = y + 1.0f;
  return y * std::bit_cast<float>((int32_t(n) + 127) << 23);
}

}  // namespace ridge::cpu
