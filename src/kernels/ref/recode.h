#pragma once
// Block types re-encoded as other block types at load, so that the fast packed kernels
// (kernels/cpu/packed_layout.h) read them:
//   Q5_0 -> Q8_0: the same scale, q - 16 as int8. Exact.
//   Q4_K -> Q4_1: each 32-value sub-block's scale d * sc and offset -dmin * m become its own f16
//     scale and minimum. The products are exact in f32 (11 x 6 bits); rounding them to f16 moves a
//     weight by at most 15 * 2^-11 of its quantization step plus 2^-11 of the offset (under 1% of a
//     step, against the +-50% the 4-bit rounding already carries).
#include <cstdint>

#include "core/dtype.h"

namespace ridge::ref {

// The type `from` is re-encoded as, or `from` itself when it stays as it is.
DType recoded_type(DType from);

// n values (a multiple of `from`'s block size) of type `from` into recoded_type(from) blocks.
void recode_row(DType from, const void* src, int64_t n, void* dst);

}  // namespace ridge::ref
