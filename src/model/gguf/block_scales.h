#pragma once
// The scale fields of a quantized tensor's blocks, checked before ridge computes with them: a NaN or
// infinite scale turns every product it enters into NaN, so a file with one is refused at load,
// naming the tensor and the block, instead of answering with NaN logits.
#include <cstdint>

#include "core/dtype.h"

namespace ridge {

// The first of `n_blocks` blocks of `type` at `data` whose scale is not finite, or -1. Checks the
// f16 d (and dmin / m) of the legacy, K, i-quant and ternary types, IQ1_M's scale spread over its
// scale nibbles, Q8_K's f32 d and MXFP4's E8M0 exponent (0xFF); plain float types have no scales
// (and NVFP4's FP8 scales are not checked).
int64_t first_nonfinite_scale(DType type, const uint8_t* data, int64_t n_blocks);

}  // namespace ridge
