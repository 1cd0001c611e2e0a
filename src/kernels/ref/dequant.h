#pragma once
// Reference dequantization: the naive truth every fast kernel is tested against.
// Each GGUF block type is decoded exactly as its format defines, one block at a time.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::ref {

// Decode `n` elements (a multiple of the type's block size) from `src` into f32.
// Throws Error for a type that has no decoder.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// True when dequantize_row handles `type`.
bool can_dequantize(DType type);

}  // namespace ridge::ref
