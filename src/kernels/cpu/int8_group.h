#pragma once
// Block types seen as 32-value groups of small signed integers with a scale per 16 values, the shape
// every integer dot kernel takes (group b of a row is values 32b..32b+31): the codebook i-quants
// (IQ2_XXS/XS/S, IQ3_XXS/S, IQ1_S/M), Q3_K and TQ1_0. The grids' magnitudes with their signs fit int8
// (|q| <= 62); IQ1's g +- 1/8 is carried as 8g +- 1 with the scale divided by 8 (exact). The SIMD
// kernels (quant_dot_simd.h) and the scalar one decode with this, so they dot the same integers.
#include <cstdint>

#include "core/dtype.h"
#include "core/fp16.h"
#include "kernels/ref/iq_grids.h"

namespace ridge::cpu {
// Internal linkage: this header is compiled once per ISA (quant_dot_<isa>.cc), and the linker must
// not pick one ISA's copy of a function for another's callers.
namespace {

constexpr bool int8_group_type(DType t) {
  return t == DType::Q3_K || t == DType::TQ1_0 || t == DType::IQ2_XXS || t == DType::IQ2_XS || t == DType::IQ2_S || t == DType::IQ3_XXS || t == DType::IQ3_S ||
         t == DType::IQ1_S || t == DType::IQ1_M;
}

namespace int8_group_detail {
inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}
inline float load_f16(const uint8_t* p) { return f16_to_f32(load_u16(p)); }
// TQ1_0's base-3 digit n of a byte (five to a byte, as a fraction of 243), minus 1.
inline int8_t tq1_digit(uint8_t packed, int n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  return int8_t(((uint16_t(uint8_t(packed * kPow3[n])) * 3) >> 8) - 1);
}
// Q3_K's sixteen 6-bit scales in 12 bytes: low nibbles in bytes 0..7 (scales 0..7 low, 8..15
// high), the top 2 bits in bytes 8..11.
inline int q3k_scale(const uint8_t* packed, int s) {
  const int low = s < 8 ? packed[s] & 0x0f : packed[s - 8] >> 4;
  const int high = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | high << 4) - 32;
}
// Eight values of a grid entry with their sign bits applied.
inline void signed_entry(int8_t* q, uint64_t entry, uint8_t signs, int n = 8) {
  for (int j = 0; j < n; ++j) q[j] = int8_t(((signs >> j) & 1 ? -1 : 1) * ref::grid_byte(entry, j));
}
// IQ1's eight values 8g + delta (delta +-1).
inline void iq1_entry(int8_t* q, uint64_t entry, int delta) {
  for (int j = 0; j < 8; ++j) q[j] = int8_t(8 * int8_t(ref::grid_byte(entry, j)) + delta);
}
}  // namespace int8_group_detail

// Group b of a row of `type` blocks: q[32] and scale[0] (values 0-15), scale[1] (values 16-31).
inline void int8_group(DType type, const uint8_t* row, int64_t b, int8_t* q, float* scale) {
  using namespace int8_group_detail;
  const int g = int(b % 8);
  const int64_t blk = b / 8;
  switch (type) {
    case DType::Q3_K: {  // hmask[32], qs[64] (2-bit lows), scales[12], d; a clear high bit subtracts 4
      const uint8_t* p = row + blk * 110;
      for (int l = 0; l < 32; ++l) {
        const int low = (p[32 + 32 * (g / 4) + l] >> (2 * (g % 4))) & 3;
        q[l] = int8_t(low - ((p[l] >> g) & 1 ? 0 : 4));
      }
      for (int h = 0; h < 2; ++h) scale[h] = load_f16(p + 108) * float(q3k_scale(p + 96, 2 * g + h));
      return;
    }
    case DType::TQ1_0: {  // qs[48] (bytes 0-31: values 0-159 digit-major; 32-47: 160-239), qh[4] (240-255), d
      const uint8_t* p = row + blk * 54;
      for (int j = 0; j < 32; ++j) {
        const int v = 32 * g + j;
        q[j] = v < 160 ? tq1_digit(p[v % 32], v / 32)
             : v < 240 ? tq1_digit(p[32 + (v - 160) % 16], (v - 160) / 16)
                       : tq1_digit(p[48 + (v - 240) % 4], (v - 240) / 4);
      }
      scale[0] = scale[1] = load_f16(p + 52);
      return;
    }
    case DType::IQ2_XXS: {
      const uint8_t* p = row + blk * 66;
      const uint32_t aux = load_u32(p + 6 + 8 * g);
      for (int l = 0; l < 4; ++l) signed_entry(q + 8 * l, ref::kIq2xxsGrid[p[2 + 8 * g + l]], ref::kSignsEvenParity[(aux >> (7 * l)) & 127]);
      scale[0] = scale[1] = load_f16(p) * (0.5f + float(aux >> 28)) * 0.25f;
      return;
    }
    case DType::IQ2_XS: {
      const uint8_t* p = row + blk * 74;
      for (int l = 0; l < 4; ++l) {
        const uint16_t v = load_u16(p + 2 + 8 * g + 2 * l);
        signed_entry(q + 8 * l, ref::kIq2xsGrid[v & 511], ref::kSignsEvenParity[v >> 9]);
      }
      for (int h = 0; h < 2; ++h) scale[h] = load_f16(p) * (0.5f + float((p[66 + g] >> (4 * h)) & 0x0f)) * 0.25f;
      return;
    }
    case DType::IQ2_S: {
      const uint8_t* p = row + blk * 82;
      for (int l = 0; l < 4; ++l) {
        const int index = p[2 + 4 * g + l] | ((p[66 + g] >> (2 * l)) & 3) << 8;
        signed_entry(q + 8 * l, ref::kIq2sGrid[index], p[34 + 4 * g + l]);
      }
      for (int h = 0; h < 2; ++h) scale[h] = load_f16(p) * (0.5f + float((p[74 + g] >> (4 * h)) & 0x0f)) * 0.25f;
      return;
    }
    case DType::IQ3_XXS: {
      const uint8_t* p = row + blk * 98;
      const uint32_t aux = load_u32(p + 66 + 4 * g);
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = ref::kSignsEvenParity[(aux >> (7 * l)) & 127];
        const uint64_t entry = uint64_t(ref::kIq3xxsGrid[p[2 + 8 * g + 2 * l]]) | uint64_t(ref::kIq3xxsGrid[p[2 + 8 * g + 2 * l + 1]]) << 32;
        signed_entry(q + 8 * l, entry, signs);
      }
      scale[0] = scale[1] = load_f16(p) * (0.5f + float(aux >> 28)) * 0.5f;
      return;
    }
    case DType::IQ3_S: {
      const uint8_t* p = row + blk * 110;
      for (int l = 0; l < 4; ++l) {
        uint64_t entry = 0;
        for (int e = 0; e < 2; ++e) {
          const int k = 2 * l + e;
          entry |= uint64_t(ref::kIq3sGrid[p[2 + 8 * g + k] | ((p[66 + g] >> k) & 1) << 8]) << (32 * e);
        }
        signed_entry(q + 8 * l, entry, p[74 + 4 * g + l]);
      }
      scale[0] = scale[1] = load_f16(p) * float(1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f));
      return;
    }
    case DType::IQ1_S: {
      const uint8_t* p = row + blk * 50;
      const uint16_t qh = load_u16(p + 34 + 2 * g);
      for (int l = 0; l < 4; ++l) iq1_entry(q + 8 * l, ref::kIq1sGrid[p[2 + 4 * g + l] | ((qh >> (3 * l)) & 7) << 8], qh & 0x8000 ? -1 : 1);
      scale[0] = scale[1] = load_f16(p) * float(2 * ((qh >> 12) & 7) + 1) * 0.125f;
      return;
    }
    case DType::IQ1_M: {
      const uint8_t* p = row + blk * 56;
      uint16_t sc[4];
      for (int w = 0; w < 4; ++w) sc[w] = load_u16(p + 48 + 2 * w);
      const float d = f16_to_f32(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
      for (int l = 0; l < 4; ++l) {
        const int k = 4 * g + l;
        const int nibble = (p[32 + k / 2] >> (4 * (k % 2))) & 0x0f;
        iq1_entry(q + 8 * l, ref::kIq1sGrid[p[k] | (nibble & 7) << 8], nibble & 8 ? -1 : 1);
      }
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * g + h;
        scale[h] = d * float(2 * ((sc[j / 4] >> (3 * (j % 4))) & 7) + 1) * 0.125f;
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace
}  // namespace ridge::cpu
