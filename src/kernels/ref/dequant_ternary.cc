// The ternary types of BitNet-style models: every weight is d * {-1, 0, 1}, d one f16 per 256.
#include "kernels/ref/dequant_blocks.h"

namespace ridge::ref {
namespace {

// TQ1_0 packs five ternary digits into a byte as a fraction of 243: multiplying the byte by 3^n
// (mod 256) brings digit n to the top, and (q * 3) >> 8 reads it.
int ternary_digit(uint8_t packed, int n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t q = uint8_t(packed * kPow3[n]);
  return ((uint16_t(q) * 3) >> 8) - 1;
}

}  // namespace

// TQ1_0 (54 bytes): qs[48] (five digits a byte: bytes 0..31 give values 0..159, digit-major,
// bytes 32..47 values 160..239), qh[4] (four digits a byte: values 240..255), d.
void dequantize_tq1_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 54) {
    const float d = load_f16(src + 52);
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m) *dst++ = d * float(ternary_digit(src[m], n));
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m) *dst++ = d * float(ternary_digit(src[32 + m], n));
    for (int n = 0; n < 4; ++n)
      for (int m = 0; m < 4; ++m) *dst++ = d * float(ternary_digit(src[48 + m], n));
  }
}

// TQ2_0 (66 bytes): qs[64] (2 bits a value, q - 1: per 128 values 32 bytes, bit pair l giving
// values 32l..32l+31), d.
void dequantize_tq2_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 66) {
    const float d = load_f16(src + 64);
    for (int half = 0; half < 2; ++half)
      for (int l = 0; l < 4; ++l)
        for (int m = 0; m < 32; ++m) *dst++ = d * float(((src[32 * half + m] >> (2 * l)) & 3) - 1);
  }
}

}  // namespace ridge::ref
