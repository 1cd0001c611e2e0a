#pragma once
// Activations quantized on the fly to int8 in blocks of 32, so that matmuls against 4- and 8-bit
// weights run as integer dot products. The rounding is llama.cpp's (Q8_0 / Q8_1 as its x86 path
// quantizes them): scale amax/127 stored as f16, q = round-half-even(x * 127/amax), and the block
// sum times the scale as f16, which is how Q4_1's minimum enters the dot product.
#include <cstdint>

namespace ridge::cpu {

inline constexpr int64_t kActBlock = 32;

struct ActBlock {
  float d;      // scale, rounded to f16: x ≈ d * q
  float s;      // (amax/127) * Σq rounded to f16 (Q8_1's s)
  int32_t sum;  // Σq, exact (the packed kernels' Q4_0 and Q8_0 offsets)
  int8_t q[32];
};
static_assert(sizeof(ActBlock) == 44);

// Σq of each 16-value half of a block (the Q6_K kernels' -32 offset enters through them).
inline void half_sums(const ActBlock& a, int32_t& lo, int32_t& hi) {
  lo = hi = 0;
  for (int l = 0; l < 16; ++l) lo += a.q[l], hi += a.q[16 + l];
}

// x: (n) f32, n a multiple of 32 -> out: (n / 32) blocks. Every variant gives the same bits.
void quantize_activations(const float* x, int64_t n, ActBlock* out);  // the active ISA's
void quantize_activations_scalar(const float* x, int64_t n, ActBlock* out);
void quantize_activations_avx512(const float* x, int64_t n, ActBlock* out);  // AVX-512 F/BW CPUs only
void quantize_activations_avx2(const float* x, int64_t n, ActBlock* out);    // AVX2 CPUs

}  // namespace ridge::cpu
