// The "K" quants: 256-element super-blocks split into sub-blocks of 16 or 32 elements, each
// with its own small integer scale (and min) multiplied by the super-block's f16 d (and dmin).
// Each decoder walks elements in output order; `i` is the element index within the super-block.
// Products are formed as (d * scale) * q [- dmin * min], the order ggml and the gguf package use.
#include "kernels/ref/dequant_blocks.h"
#include "kernels/ref/k_scales.h"

namespace ridge::ref {
namespace {

constexpr int kQK = 256;

// Q3_K packs sixteen 6-bit scales into 12 bytes: low 4 bits are the nibbles of bytes 0..7
// (low nibbles for scales 0..7, high for 8..15), top 2 bits come from bytes 8..11.
int unpack_scale_q3_k(const uint8_t* packed, int s) {
  const int low = s < 8 ? packed[s] & 0x0f : packed[s - 8] >> 4;
  const int high = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | high << 4) - 32;
}

}  // namespace

// Q2_K (84 bytes): scales[16] (low nibble scale, high nibble min), qs[64] of 2-bit quants, d, dmin.
// Each 128-element half uses 32 bytes of qs; its four 32-element groups are bit pairs 0..3.
void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 84, dst += kQK) {
    const uint8_t* scales = src;
    const uint8_t* qs = src + 16;
    const float d = load_f16(src + 80);
    const float dmin = load_f16(src + 82);
    for (int i = 0; i < kQK; ++i) {
      const int half = i / 128, group = (i % 128) / 32, l = i % 32;
      const int q = (qs[half * 32 + l] >> (2 * group)) & 3;
      const uint8_t sc = scales[i / 16];
      const float dl = d * float(sc & 0x0f);
      const float ml = dmin * float(sc >> 4);
      dst[i] = dl * float(q) - ml;
    }
  }
}

// Q3_K (110 bytes): hmask[32], qs[64] of 2-bit low quants, scales[12], d.
// The third bit of element i is bit i/32 of hmask[i % 32]; when it is clear, 4 is subtracted.
void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 110, dst += kQK) {
    const uint8_t* hmask = src;
    const uint8_t* qs = src + 32;
    const uint8_t* scales = src + 96;
    const float d = load_f16(src + 108);
    for (int i = 0; i < kQK; ++i) {
      const int half = i / 128, group = (i % 128) / 32, l = i % 32;
      const int low = (qs[half * 32 + l] >> (2 * group)) & 3;
      const int high_set = (hmask[l] >> (i / 32)) & 1;
      const float dl = d * float(unpack_scale_q3_k(scales, i / 16));
      dst[i] = dl * float(low - (high_set ? 0 : 4));
    }
  }
}

// Q4_K (144 bytes): d, dmin, scales[12], qs[128]. Eight 32-element sub-blocks; each 64-element
// chunk shares 32 bytes of qs, low nibbles first.
void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 144, dst += kQK) {
    const float d = load_f16(src);
    const float dmin = load_f16(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qs = src + 16;
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, m;
      unpack_scale_min_k4(scales, sub, sc, m);
      const float dl = d * float(sc);
      const float ml = dmin * float(m);
      const uint8_t* q = qs + (sub / 2) * 32;
      const int shift = (sub % 2) * 4;
      for (int l = 0; l < 32; ++l) dst[sub * 32 + l] = dl * float((q[l] >> shift) & 0x0f) - ml;
    }
  }
}

// Q5_K (176 bytes): d, dmin, scales[12], qh[32], qs[128]. Like Q4_K; the fifth bit of
// element sub*32 + l is bit `sub` of qh[l].
void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 176, dst += kQK) {
    const float d = load_f16(src);
    const float dmin = load_f16(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qh = src + 16;
    const uint8_t* qs = src + 48;
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, m;
      unpack_scale_min_k4(scales, sub, sc, m);
      const float dl = d * float(sc);
      const float ml = dmin * float(m);
      const uint8_t* q = qs + (sub / 2) * 32;
      const int shift = (sub % 2) * 4;
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> shift) & 0x0f) | ((qh[l] >> sub) & 1) << 4;
        dst[sub * 32 + l] = dl * float(v) - ml;
      }
    }
  }
}

// Q6_K (210 bytes): ql[128] low nibbles, qh[64] high bit pairs, scales[16] as int8, d.
// Each 128-element half uses 64 bytes of ql and 32 of qh; its four 32-element groups take
// (low nibble of ql[0..31], of ql[32..63], high nibble of ql[0..31], of ql[32..63]) and bit pairs 0..3.
void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 210, dst += kQK) {
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    const auto* scales = reinterpret_cast<const int8_t*>(src + 192);
    const float d = load_f16(src + 208);
    for (int i = 0; i < kQK; ++i) {
      const int half = i / 128, group = (i % 128) / 32, l = i % 32;
      const uint8_t low_byte = ql[half * 64 + (group % 2) * 32 + l];
      const int low = group < 2 ? low_byte & 0x0f : low_byte >> 4;
      const int high = (qh[half * 32 + l] >> (2 * group)) & 3;
      const float dl = d * float(scales[i / 16]);
      dst[i] = dl * float((low | high << 4) - 32);
    }
  }
}

// Q8_K (292 bytes): f32 d, qs[256] as int8, bsums[16] (sums for dot products; not needed here).
void dequantize_q8_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 292, dst += kQK) {
    const float d = load_f32(src);
    for (int i = 0; i < kQK; ++i) dst[i] = d * float(static_cast<int8_t>(src[4 + i]));
  }
}

}  // namespace ridge::ref
