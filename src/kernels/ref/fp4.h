#pragma once
// The 4-bit float formats of GGUF's MXFP4 and NVFP4 types, in ggml's convention: a value is an
// E2M1 code (±{0, 0.5, 1, 1.5, 2, 3, 4, 6}) stored as its double, an integer in ±{0..12}, and the
// block scales decode to half their value, so code · scale is the weight.
//   MXFP4 (17 bytes / 32 values): E8M0 exponent e (scale 2^(e-127)), then 16 bytes of nibbles:
//     value j in the low nibble of byte j, value j + 16 in its high nibble.
//   NVFP4 (36 bytes / 64 values): four unsigned E4M3 scales (one per 16 values), then 32 bytes of
//     nibbles, 8 per 16-value group: value j of a group in the low nibble of its byte j, j + 8 in the
//     high nibble. A per-tensor f32 factor (NVIDIA's "global scale") lives beside the tensor as
//     "<name>.scale" and multiplies the matmul's output.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ridge::ref {

inline constexpr int8_t kFp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e-127) / 2 as an f32, exact for every e (e = 0 and 1 land on f32 subnormals).
inline float e8m0_half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Unsigned E4M3 (bias 7, subnormals m · 2^-9), halved, as ggml reads it: 0x00 and 0x7f are 0 and
// the top bit is ignored (ModelOpt's signed E4M3 scales, always positive, keep their bits).
inline float ue4m3_half(uint8_t x) {
  if (x == 0 || x == 0x7f) return 0.0f;
  const int exponent = (x >> 3) & 0x0f, mantissa = x & 7;
  const float raw = exponent == 0 ? std::ldexp(float(mantissa), -9) : std::ldexp(1.0f + float(mantissa) / 8.0f, exponent - 7);
  return raw * 0.5f;
}

// Nearest unsigned E4M3 to x > 0 as ggml rounds it (ties of the mantissa away from zero, on the
// f32 bits), saturating at 448; 0 for x <= 0 or NaN.
inline uint8_t f32_to_ue4m3(float x) {
  if (!(x > 0.0f)) return 0;
  if (x > 448.0f) x = 448.0f;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  int exponent = int((bits >> 23) & 0xff) - 127 + 7;
  if (exponent <= 0) {
    const int m = int(x * 512.0f + 0.5f);
    return m < 1 ? 0 : uint8_t(m > 7 ? 7 : m);
  }
  if (exponent >= 15) return 0x7e;
  int mantissa = int((bits >> 20) & 7) + int((bits >> 19) & 1);
  if (mantissa > 7) {
    mantissa = 0;
    if (++exponent >= 15) return 0x7e;
  }
  return uint8_t(exponent << 3 | mantissa);
}

// The code whose value times d is nearest x (the first on ties), as ggml searches it.
inline uint8_t nearest_fp4(float x, float d) {
  int best = 0;
  float best_err = std::fabs(float(kFp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(float(kFp4Values[i]) * d - x);
    if (err < best_err) best = i, best_err = err;
  }
  return uint8_t(best);
}

// MXFP4 encoding of n_blocks blocks (ggml's bytes).
void quantize_mxfp4(const float* x, uint8_t* out, int64_t n_blocks);

// NVFP4 encoding of n values (a multiple of 64) with a per-tensor factor `global` (> 0): each
// group's scale is chosen for x / global, so with global = 1 the bytes are ggml's.
void quantize_nvfp4(const float* x, uint8_t* out, int64_t n, float global);

// The per-tensor factor that lets the group scales use E4M3's whole range: amax / (6 · 448), or 1
// for an all-zero tensor (NVIDIA's choice for the global scale).
float nvfp4_global_scale(const float* x, int64_t n);

}  // namespace ridge::ref
