#pragma once
// Reference quantization: f32 rows into GGUF block types by round-to-nearest, with the arithmetic
// of ggml's quantize_row_*_ref (and the gguf Python package), so the bytes match theirs exactly.
// The inverse of dequantize_row for the simple types; the K types need ggml's search for
// scales and are not offered here.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::ref {

// Encode `n` floats (a multiple of the type's block size) into dtype_row_bytes(type, n) bytes at `dst`.
// Throws Error for a type without a quantizer or a bad `n`.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

// True for F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, MXFP4, NVFP4 (the latter with a per-tensor
// factor of 1, as ggml writes it; ref::quantize_nvfp4 takes one).
bool can_quantize(DType type);

}  // namespace ridge::ref
