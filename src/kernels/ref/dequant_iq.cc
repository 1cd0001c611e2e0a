// The i-quants: 256-element super-blocks whose quants are indices into a codebook of 8 (or 4)
// values (iq_grids.h), with sign bits apart, and IQ4's non-uniform 4-bit levels. Each value is
// formed with the gguf package's (and ggml's) operations in its order: the sub-block scale first
// (d * (0.5 + s) * 0.25 and the like), then * grid value, then * +-1.
#include "kernels/ref/dequant_blocks.h"
#include "kernels/ref/iq_grids.h"

namespace ridge::ref {
namespace {

constexpr int kQK = 256;

float sign_of(uint8_t signs, int bit) { return (signs >> bit) & 1 ? -1.0f : 1.0f; }

}  // namespace

// IQ2_XXS (66 bytes): d, then per 32 values two u32: four grid indices (bytes), and four 7-bit
// sign indices with the 4-bit scale on top.
void dequantize_iq2_xxs(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 66) {
    const float d = load_f16(src);
    for (int ib = 0; ib < 8; ++ib) {
      const uint8_t* grids = src + 2 + 8 * ib;
      const uint32_t aux = load_u32(src + 2 + 8 * ib + 4);
      const float db = d * (0.5f + float(aux >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint64_t entry = kIq2xxsGrid[grids[l]];
        const uint8_t signs = kSignsEvenParity[(aux >> (7 * l)) & 127];
        for (int j = 0; j < 8; ++j) dst[j] = db * float(grid_byte(entry, j)) * sign_of(signs, j);
      }
    }
  }
}

// IQ2_XS (74 bytes): d, qs[32] u16 (9-bit grid index, 7-bit sign index), scales[8] (a nibble per
// 16 values).
void dequantize_iq2_xs(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 74) {
    const float d = load_f16(src);
    const uint8_t* scales = src + 66;
    for (int k = 0; k < 32; ++k, dst += 8) {
      const uint16_t q = load_u16(src + 2 + 2 * k);
      const int s = (scales[k / 4] >> (4 * ((k / 2) % 2))) & 0x0f;
      const float db = d * (0.5f + float(s)) * 0.25f;
      const uint64_t entry = kIq2xsGrid[q & 511];
      const uint8_t signs = kSignsEvenParity[q >> 9];
      for (int j = 0; j < 8; ++j) dst[j] = db * float(grid_byte(entry, j)) * sign_of(signs, j);
    }
  }
}

// IQ2_S (82 bytes): d, qs[32] (grid index low bytes), signs[32] (a byte per 8 values), qh[8]
// (2 high index bits each), scales[8] (a nibble per 16 values).
void dequantize_iq2_s(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 82) {
    const float d = load_f16(src);
    const uint8_t* qs = src + 2;
    const uint8_t* signs = src + 34;
    const uint8_t* qh = src + 66;
    const uint8_t* scales = src + 74;
    for (int k = 0; k < 32; ++k, dst += 8) {
      const int index = qs[k] | ((qh[k / 4] >> (2 * (k % 4))) & 3) << 8;
      const int s = (scales[k / 4] >> (4 * ((k / 2) % 2))) & 0x0f;
      const float db = d * (0.5f + float(s)) * 0.25f;
      const uint64_t entry = kIq2sGrid[index];
      for (int j = 0; j < 8; ++j) dst[j] = db * float(grid_byte(entry, j)) * sign_of(signs[k], j);
    }
  }
}

// IQ3_XXS (98 bytes): d, qs[64] (grid indices, 4 values each), then per 32 values a u32 of four
// 7-bit sign indices and the 4-bit scale on top.
void dequantize_iq3_xxs(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 98) {
    const float d = load_f16(src);
    const uint8_t* qs = src + 2;
    for (int ib = 0; ib < 8; ++ib) {
      const uint32_t aux = load_u32(src + 66 + 4 * ib);
      const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint8_t signs = kSignsEvenParity[(aux >> (7 * l)) & 127];
        const uint32_t lo = kIq3xxsGrid[qs[8 * ib + 2 * l]], hi = kIq3xxsGrid[qs[8 * ib + 2 * l + 1]];
        for (int j = 0; j < 8; ++j) dst[j] = db * float(grid_byte(j < 4 ? lo : hi, j % 4)) * sign_of(signs, j);
      }
    }
  }
}

// IQ3_S (110 bytes): d, qs[64] (grid index low bytes), qh[8] (the ninth bits), signs[32],
// scales[4] (a nibble per 32 values: d * (1 + 2s)).
void dequantize_iq3_s(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 110) {
    const float d = load_f16(src);
    const uint8_t* qs = src + 2;
    const uint8_t* qh = src + 66;
    const uint8_t* signs = src + 74;
    const uint8_t* scales = src + 106;
    for (int i = 0; i < kQK; ++i) {
      const int k = i / 4;
      const int index = qs[k] | ((qh[k / 8] >> (k % 8)) & 1) << 8;
      const int s = (scales[i / 64] >> (4 * ((i / 32) % 2))) & 0x0f;
      const float db = d * float(1 + 2 * s);
      dst[i] = db * float(grid_byte(kIq3sGrid[index], i % 4)) * sign_of(signs[i / 8], i % 8);
    }
    dst += kQK;
  }
}

// IQ1_S (50 bytes): d, qs[32] (grid index low bytes), qh[8] u16 per 32 values: four 3-bit high
// index parts, a 3-bit scale (d * (2s + 1)) and the sign of the +-1/8 shift.
void dequantize_iq1_s(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 50) {
    const float d = load_f16(src);
    for (int ib = 0; ib < 8; ++ib) {
      const uint16_t qh = load_u16(src + 34 + 2 * ib);
      const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l, dst += 8) {
        const uint64_t entry = kIq1sGrid[src[2 + 4 * ib + l] | ((qh >> (3 * l)) & 7) << 8];
        for (int j = 0; j < 8; ++j) dst[j] = dl * (float(int8_t(grid_byte(entry, j))) + delta);
      }
    }
  }
}

// IQ1_M (56 bytes): qs[32] (grid index low bytes), qh[16] (a nibble per 8 values: 3 high index
// bits and the shift's sign), scales[4] u16: twelve bits of 3-bit scales (one per 16 values) and,
// in their top nibbles, the f16 d.
void dequantize_iq1_m(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 56) {
    uint16_t sc[4];
    for (int w = 0; w < 4; ++w) sc[w] = load_u16(src + 48 + 2 * w);
    const uint16_t d_bits = uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = f16_to_f32(d_bits);
    for (int k = 0; k < 32; ++k, dst += 8) {
      const int j = k / 2;  // the 16-value group
      const float dl = d * float(2 * ((sc[j / 4] >> (3 * (j % 4))) & 7) + 1);
      const int nibble = (src[32 + k / 2] >> (4 * (k % 2))) & 0x0f;
      const float delta = nibble & 8 ? -kIq1Delta : kIq1Delta;
      const uint64_t entry = kIq1sGrid[src[k] | (nibble & 7) << 8];
      for (int i = 0; i < 8; ++i) dst[i] = dl * (float(int8_t(grid_byte(entry, i))) + delta);
    }
  }
}

// IQ4_NL (18 bytes, 32 values): d, qs[16]: low nibbles are values 0..15, high nibbles 16..31.
void dequantize_iq4_nl(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = load_f16(src);
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * float(kIq4nlValues[src[2 + j] & 0x0f]);
      dst[j + 16] = d * float(kIq4nlValues[src[2 + j] >> 4]);
    }
  }
}

// IQ4_XS (136 bytes): d, scales_h u16 (2 high bits per 32 values), scales_l[4] (a low nibble per
// 32 values; scale = d * (s - 32)), qs[128] (per 32 values IQ4_NL's nibble order).
void dequantize_iq4_xs(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 136) {
    const float d = load_f16(src);
    const uint16_t scales_h = load_u16(src + 2);
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const int ls = ((src[4 + ib / 2] >> (4 * (ib % 2))) & 0x0f) | ((scales_h >> (2 * ib)) & 3) << 4;
      const float dl = d * float(ls - 32);
      const uint8_t* qs = src + 8 + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * float(kIq4nlValues[qs[j] & 0x0f]);
        dst[j + 16] = dl * float(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace ridge::ref
