#pragma once
// How a weight matrix sits in device memory. GGUF blocks interleave scales and quants at odd
// strides (18, 34, 210 bytes), which no GPU load likes; at upload each matrix is split into
// sections, every row of every section 16-byte aligned, so a warp reads its row with full-width
// coalesced loads:
//   Q4_0, Q4_1  qs: (rows, cols/2) the blocks' 16 nibble bytes in file order | dm: (rows, cols/32) f16 pairs (d, m; m = 0 for Q4_0)
//   Q8_0        qs: (rows, cols) int8                                         | d:  (rows, cols/32) f16
//   Q6_K        ql: (rows, cols/2) | qh: (rows, cols/4) | sc: (rows, cols/16) int8 | d: (rows, cols/256) f16
//   F32, F16, BF16: the rows as stored.
// The values are the file's bytes, regrouped: dequantizing gives exactly ref::dequantize_row.
// Header-only and free of CUDA so that the host packer (backend/weight_repack) and the kernels share it.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::cuda {

struct WeightSections {
  int64_t qs = 0;      // offset of the quants (or the plain rows)
  int64_t qh = 0;      // Q6_K: high 2 bits
  int64_t scales = 0;  // Q4_x: (d, m) pairs; Q8_0, Q6_K: d; Q6_K: sub-block scales at `sub_scales`
  int64_t sub_scales = 0;
  int64_t bytes = 0;   // the whole matrix
};

inline constexpr int64_t kSectionAlign = 256;

inline constexpr int64_t align_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

// True for the types the kernels read in place (the rest are converted to BF16 at upload).
inline constexpr bool device_weight_type(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q8_0 || t == DType::Q6_K || t == DType::F32 ||
         t == DType::F16 || t == DType::BF16;
}

// Section offsets of a (rows, cols) matrix of type t (device_weight_type(t); cols a multiple of the block).
inline constexpr WeightSections weight_sections(DType t, int64_t rows, int64_t cols) {
  WeightSections s;
  switch (t) {
    case DType::Q4_0:
    case DType::Q4_1:
      s.scales = align_up(rows * cols / 2, kSectionAlign);
      s.bytes = s.scales + rows * (cols / 32) * 4;
      break;
    case DType::Q8_0:
      s.scales = align_up(rows * cols, kSectionAlign);
      s.bytes = s.scales + rows * (cols / 32) * 2;
      break;
    case DType::Q6_K:
      s.qh = align_up(rows * cols / 2, kSectionAlign);
      s.sub_scales = s.qh + align_up(rows * cols / 4, kSectionAlign);
      s.scales = s.sub_scales + align_up(rows * cols / 16, kSectionAlign);
      s.bytes = s.scales + rows * (cols / 256) * 2;
      break;
    case DType::F32: s.bytes = rows * cols * 4; break;
    case DType::F16:
    case DType::BF16: s.bytes = rows * cols * 2; break;
    default: s.bytes = 0; break;
  }
  s.bytes = align_up(s.bytes, kSectionAlign);
  return s;
}

}  // namespace ridge::cuda
