// MXFP4 and NVFP4 blocks (layouts in kernels/ref/fp4.h).
#include "kernels/ref/dequant_blocks.h"
#include "kernels/ref/fp4.h"

namespace ridge::ref {

void dequantize_mxfp4(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 17, dst += 32) {
    const float d = e8m0_half(src[0]);
    for (int j = 0; j < 16; ++j) {
      dst[j] = float(kFp4Values[src[1 + j] & 0x0f]) * d;
      dst[j + 16] = float(kFp4Values[src[1 + j] >> 4]) * d;
    }
  }
}

void dequantize_nvfp4(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 36) {
    for (int s = 0; s < 4; ++s, dst += 16) {
      const float d = ue4m3_half(src[s]);
      const uint8_t* qs = src + 4 + 8 * s;
      for (int j = 0; j < 8; ++j) {
        dst[j] = float(kFp4Values[qs[j] & 0x0f]) * d;
        dst[j + 8] = float(kFp4Values[qs[j] >> 4]) * d;
      }
    }
  }
}

}  // namespace ridge::ref
