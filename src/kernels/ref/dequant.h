#pragma once
// Reference dequantization: the naive truth every fast kernel is tested against.
// Each GGUF block type is decoded exactly as its format defines, one block at a time,
// with the same arithmetic order as ggml and the gguf Python package, so results match bit for bit.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::ref {

// Decode `n` elements (a multiple of the type's block size) from `src` into f32.
// `src` needs no alignment. Throws Error for a type that has no decoder or a bad `n`.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// True when dequantize_row handles `type`.
bool can_dequantize(DType type);

}  // namespace ridge::ref
