// TQ1_0 and TQ2_0, the ternary types of BitNet-style models: every 256 values x ≈ d * t with
// t in {-1, 0, 1} and d the super-block's largest magnitude (ggml's quantize_row_tq*_0_ref; an
// imatrix changes nothing, as in llama.cpp). t is x / d rounded half away from zero. Byte layouts
// are those ref::dequantize_row reads (kernels/ref/dequant_ternary.cc).
#include <cmath>

#include "core/error.h"
#include "quant/block_quantize.h"
#include "quant/scale_search.h"

#ifdef __clang__  // gcc takes -ffp-contract=off from CMake alone
#pragma STDC FP_CONTRACT OFF
#endif

namespace ridge::quant {
namespace {

// The values one d covers.
constexpr int kQK = 256;

// t + 1 in {0, 1, 2} for x / d, with `inv_d` = 1 / d.
int trit(float x, float inv_d) { return int(std::lround(x * inv_d)) + 1; }

// Five (or four, then shifted up by one digit) trits a byte, the first the most significant, as
// a fraction of 243 rounded up to 8 bits: byte = ceil(value * 256 / 243). `stride` apart in x.
uint8_t pack_trits(const float* x, int count, int stride, float inv_d) {
  int value = 0;
  for (int n = 0; n < count; ++n) value = value * 3 + trit(x[n * stride], inv_d);
  for (int n = count; n < 5; ++n) value *= 3;
  return uint8_t((value * 256 + 242) / 243);
}

// The super-block's largest magnitude, stored as its f16 d; returns 1 / d in f32 (0 for zeros).
float store_scale(const float* x, uint8_t* d_out) {
  float amax = 0;
  for (int j = 0; j < kQK; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);  // a NaN wins, as in ggml
  store_f16(d_out, amax);
  return amax ? 1.0f / amax : 0.0f;
}

// TQ1_0 (54 bytes): qs[48] (bytes 0..31: values 0..159, trit n of byte m is value m + 32n;
// bytes 32..47: values 160..239 likewise by 16), qh[4] (values 240..255, four trits a byte), d.
void quantize_tq1_0(const float* x, uint8_t* out) {
  const float inv_d = store_scale(x, out + 52);
  for (int m = 0; m < 32; ++m) out[m] = pack_trits(x + m, 5, 32, inv_d);
  for (int m = 0; m < 16; ++m) out[32 + m] = pack_trits(x + 160 + m, 5, 16, inv_d);
  for (int m = 0; m < 4; ++m) out[48 + m] = pack_trits(x + 240 + m, 4, 4, inv_d);
}

// TQ2_0 (66 bytes): qs[64] (per 128 values 32 bytes; bit pair n of byte m is value m + 32n), d.
void quantize_tq2_0(const float* x, uint8_t* out) {
  const float inv_d = store_scale(x, out + 64);
  for (int half = 0; half < 2; ++half) {
    const float* xh = x + 128 * half;
    for (int m = 0; m < 32; ++m) {
      int byte = 0;
      for (int n = 0; n < 4; ++n) byte |= (trit(xh[m + 32 * n], inv_d) & 3) << (2 * n);
      out[32 * half + m] = uint8_t(byte);
    }
  }
}

}  // namespace

void quantize_row_ternary(DType type, const float* x, uint8_t* dst, int64_t n) {
  if (type != DType::TQ1_0 && type != DType::TQ2_0) fail("{} is not a ternary type", dtype_name(type));
  const int64_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, dst += block_bytes)
    type == DType::TQ1_0 ? quantize_tq1_0(x, dst) : quantize_tq2_0(x, dst);
}

}  // namespace ridge::quant
