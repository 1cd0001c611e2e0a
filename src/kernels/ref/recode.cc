#include "kernels/ref/recode.h"

#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/k_scales.h"

namespace ridge::ref {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// Q5_0 (22 bytes: d, qh u32, qs[16]) -> Q8_0 (34 bytes: d, qs[32] int8).
void q5_0_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 22, dst += 34) {
    uint32_t qh;
    std::memcpy(&qh, src + 2, 4);
    std::memcpy(dst, src, 2);
    for (int j = 0; j < 16; ++j) {
      const int lo = (src[6 + j] & 0x0f) | int((qh >> j) & 1) << 4;
      const int hi = (src[6 + j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      dst[2 + j] = uint8_t(int8_t(lo - 16));
      dst[2 + j + 16] = uint8_t(int8_t(hi - 16));
    }
  }
}

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]) -> eight Q4_1 blocks (20 bytes: d, m, qs[16]).
// Sub-block s takes the low (s even) or high (s odd) nibbles of qs[32 * (s / 2) .. + 32].
void q4_k_to_q4_1(const uint8_t* src, uint8_t* dst, int64_t n_super) {
  for (int64_t b = 0; b < n_super; ++b, src += 144) {
    const float d = f16_to_f32(load_u16(src)), dmin = f16_to_f32(load_u16(src + 2));
    for (int s = 0; s < 8; ++s, dst += 20) {
      uint8_t sc, m;
      unpack_scale_min_k4(src + 4, s, sc, m);
      store_u16(dst, f32_to_f16(d * float(sc)));
      store_u16(dst + 2, f32_to_f16(-(dmin * float(m))));
      const uint8_t* qs = src + 16 + 32 * (s / 2);
      const int shift = s % 2 == 0 ? 0 : 4;
      for (int j = 0; j < 16; ++j)
        dst[4 + j] = uint8_t(((qs[j] >> shift) & 0x0f) | (((qs[j + 16] >> shift) & 0x0f) << 4));
    }
  }
}

}  // namespace

DType recoded_type(DType from) {
  if (from == DType::Q5_0) return DType::Q8_0;
  if (from == DType::Q4_K) return DType::Q4_1;
  return from;
}

void recode_row(DType from, const void* src, int64_t n, void* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  switch (from) {
    case DType::Q5_0:
      if (n % 32 != 0) fail("Q5_0 rows hold whole 32-value blocks, not {} values", n);
      return q5_0_to_q8_0(s, d, n / 32);
    case DType::Q4_K:
      if (n % 256 != 0) fail("Q4_K rows hold whole 256-value super-blocks, not {} values", n);
      return q4_k_to_q4_1(s, d, n / 256);
    default:
      fail("{} is not re-encoded", dtype_name(from));
  }
}

}  // namespace ridge::ref
