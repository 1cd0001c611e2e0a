#pragma once
// Block types seen as 32-value groups of small signed integers, the shape every integer dot kernel
// takes (group b of a row is values 32b..32b+31): the codebook i-quants (IQ2_XXS/XS/S, IQ3_XXS/S,
// IQ1_S/M), IQ4_XS, Q3_K, TQ1_0 and TQ2_0. Value j of a group is D * m[j / 16] * q[j]: q the grid's
// magnitudes with their signs (|q| <= 62) or IQ4's levels (-127..113), int8; m a small integer
// multiplier per 16-value half (|m| <= 32; IQ4_XS's 6-bit scale less 32), D the
// super-block's f32 scale. Every format's scale is an integer times a power of two of its f16 d
// (IQ2's d * (0.5 + s) / 4 is d / 8 * (2s + 1)), and IQ1's g +- 1/8 is carried as 8g +- 1 with D
// divided by 8, so the split is exact.
//
// The arithmetic every kernel performs for a weight row and a token, group after group (the Q6_K
// kernels' form, so the wide many-token kernels serve these types too):
//   I   = m[0] * Σ_lo q·a + m[1] * Σ_hi q·a     (exact int32 and float: |I| <= 32·127·127·32 < 2^24)
//   acc = fma(float(I), D * a.d, acc)
// The SIMD kernels (int8_group_simd.h) and the scalar one decode with this, so they give the same bits.
#include <cstdint>

#include "core/dtype.h"
#include "core/fp16.h"
#include "kernels/ref/iq_grids.h"

namespace ridge::cpu {
// Internal linkage: this header is compiled once per ISA (quant_dot_<isa>.cc), and the linker must
// not pick one ISA's copy of a function for another's callers.
namespace {

constexpr bool int8_group_type(DType t) {
  return t == DType::Q3_K || t == DType::TQ1_0 || t == DType::TQ2_0 || t == DType::IQ4_XS || t == DType::IQ2_XXS || t == DType::IQ2_XS || t == DType::IQ2_S || t == DType::IQ3_XXS || t == DType::IQ3_S ||
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

// Group b of a row of `type` blocks: q[32], the halves' multipliers m[0] (values 0-15) and m[1]
// (values 16-31); returns D.
inline float int8_group(DType type, const uint8_t* row, int64_t b, int8_t* q, int32_t* m) {
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
      for (int h = 0; h < 2; ++h) m[h] = q3k_scale(p + 96, 2 * g + h);
      return load_f16(p + 108);
    }
    case DType::TQ1_0: {  // qs[48] (bytes 0-31: values 0-159 digit-major; 32-47: 160-239), qh[4] (240-255), d
      const uint8_t* p = row + blk * 54;
      for (int j = 0; j < 32; ++j) {
        const int v = 32 * g + j;
        q[j] = v < 160 ? tq1_digit(p[v % 32], v / 32)
             : v < 240 ? tq1_digit(p[32 + (v - 160) % 16], (v - 160) / 16)
                       : tq1_digit(p[48 + (v - 240) % 4], (v - 240) / 4);
      }
      m[0] = m[1] = 1;
      return load_f16(p + 52);
    }
    case DType::TQ2_0: {  // qs[64]: group g is bit pair g % 4 of the 32 bytes of half g / 4, less 1; d
      const uint8_t* p = row + blk * 66;
      for (int j = 0; j < 32; ++j) q[j] = int8_t(((p[32 * (g / 4) + j] >> (2 * (g % 4))) & 3) - 1);
      m[0] = m[1] = 1;
      return load_f16(p + 64);
    }
    case DType::IQ4_XS: {  // d, scales_h (2 bits per group), scales_l (a nibble per group), qs[128]
      const uint8_t* p = row + blk * 136;
      for (int j = 0; j < 16; ++j) {
        q[j] = ref::kIq4nlValues[p[8 + 16 * g + j] & 0x0f];
        q[j + 16] = ref::kIq4nlValues[p[8 + 16 * g + j] >> 4];
      }
      m[0] = m[1] = (((p[4 + g / 2] >> (4 * (g % 2))) & 0x0f) | ((load_u16(p + 2) >> (2 * g)) & 3) << 4) - 32;
      return load_f16(p);
    }
    case DType::IQ2_XXS: {
      const uint8_t* p = row + blk * 66;
      const uint32_t aux = load_u32(p + 6 + 8 * g);
      for (int l = 0; l < 4; ++l) signed_entry(q + 8 * l, ref::kIq2xxsGrid[p[2 + 8 * g + l]], ref::kSignsEvenParity[(aux >> (7 * l)) & 127]);
      m[0] = m[1] = int32_t(2 * (aux >> 28) + 1);
      return load_f16(p) * 0.125f;
    }
    case DType::IQ2_XS: {
      const uint8_t* p = row + blk * 74;
      for (int l = 0; l < 4; ++l) {
        const uint16_t v = load_u16(p + 2 + 8 * g + 2 * l);
        signed_entry(q + 8 * l, ref::kIq2xsGrid[v & 511], ref::kSignsEvenParity[v >> 9]);
      }
      for (int h = 0; h < 2; ++h) m[h] = 2 * ((p[66 + g] >> (4 * h)) & 0x0f) + 1;
      return load_f16(p) * 0.125f;
    }
    case DType::IQ2_S: {
      const uint8_t* p = row + blk * 82;
      for (int l = 0; l < 4; ++l) {
        const int index = p[2 + 4 * g + l] | ((p[66 + g] >> (2 * l)) & 3) << 8;
        signed_entry(q + 8 * l, ref::kIq2sGrid[index], p[34 + 4 * g + l]);
      }
      for (int h = 0; h < 2; ++h) m[h] = 2 * ((p[74 + g] >> (4 * h)) & 0x0f) + 1;
      return load_f16(p) * 0.125f;
    }
    case DType::IQ3_XXS: {
      const uint8_t* p = row + blk * 98;
      const uint32_t aux = load_u32(p + 66 + 4 * g);
      for (int l = 0; l < 4; ++l) {
        const uint8_t signs = ref::kSignsEvenParity[(aux >> (7 * l)) & 127];
        const uint64_t entry = uint64_t(ref::kIq3xxsGrid[p[2 + 8 * g + 2 * l]]) | uint64_t(ref::kIq3xxsGrid[p[2 + 8 * g + 2 * l + 1]]) << 32;
        signed_entry(q + 8 * l, entry, signs);
      }
      m[0] = m[1] = int32_t(2 * (aux >> 28) + 1);
      return load_f16(p) * 0.25f;
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
      m[0] = m[1] = 1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f);
      return load_f16(p);
    }
    case DType::IQ1_S: {
      const uint8_t* p = row + blk * 50;
      const uint16_t qh = load_u16(p + 34 + 2 * g);
      for (int l = 0; l < 4; ++l) iq1_entry(q + 8 * l, ref::kIq1sGrid[p[2 + 4 * g + l] | ((qh >> (3 * l)) & 7) << 8], qh & 0x8000 ? -1 : 1);
      m[0] = m[1] = 2 * ((qh >> 12) & 7) + 1;
      return load_f16(p) * 0.125f;
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
        m[h] = 2 * ((sc[j / 4] >> (3 * (j % 4))) & 7) + 1;
      }
      return d * 0.125f;
    }
    default:
      return 0.0f;
  }
}

}  // namespace
}  // namespace ridge::cpu
