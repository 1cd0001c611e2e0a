#pragma once
// FP8 E4M3 (the "fn" variant of OCP FP8 / NVIDIA's E4M3: 1 sign, 4 exponent bits with bias 7,
// 3 mantissa bits, no infinities, 0x7f/0xff are NaN, largest finite value 448).
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ridge {

inline constexpr float kFp8E4M3Max = 448.0f;

inline float fp8_e4m3_to_f32(uint8_t v) {
  const float sign = (v & 0x80) ? -1.0f : 1.0f;
  const int exponent = (v >> 3) & 0x0f;
  const int mantissa = v & 0x07;
  if (exponent == 0x0f && mantissa == 0x07) return NAN;
  if (exponent == 0) return sign * std::ldexp(float(mantissa), -9);  // subnormal: m/8 * 2^-6
  return sign * std::ldexp(1.0f + float(mantissa) / 8.0f, exponent - 7);
}

// Round to nearest even; values beyond the range saturate to ±448 (what a scaled KV cache wants).
inline uint8_t f32_to_fp8_e4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  float a = std::fabs(x);
  if (a >= kFp8E4M3Max) return sign | 0x7e;
  int exponent;
  std::frexp(a, &exponent);  // a = f * 2^exponent, f in [0.5, 1)
  // Quantum of the binade holding a: 2^(e-1-3) for normals (e-1 >= -6), 2^-9 for subnormals.
  const int quantum_exp = std::max(exponent - 1, -6) - 3;
  const float q = std::nearbyint(std::ldexp(a, -quantum_exp));  // round half to even (default mode)
  a = std::ldexp(q, quantum_exp);
  if (a == 0.0f) return sign;
  if (a >= kFp8E4M3Max) return sign | 0x7e;
  std::frexp(a, &exponent);
  const int biased = exponent - 1 + 7;
  if (biased <= 0) return sign | uint8_t(std::ldexp(a, 9));  // subnormal
  const int mantissa = int(std::ldexp(a, -(exponent - 1) + 3)) - 8;
  return sign | uint8_t(biased << 3) | uint8_t(mantissa);
}

}  // namespace ridge
