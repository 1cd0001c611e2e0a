#pragma once
// The host side of kernels/cuda/weight_layout.h: a matrix's GGUF rows (or rows the CPU regrouped in
// place for its AVX-512 VNNI kernels, WeightRef::packed) split into the device sections, and the
// way back (the tests' oracle: a device-layout row dequantizes to ref::dequantize_row of the original).
#include <cstdint>

#include "core/dtype.h"

namespace ridge {

// out: cuda::weight_sections(type, rows, cols).bytes bytes; cuda::device_weight_type(type) only.
// Rows in parallel (OpenMP).
void repack_for_device(DType type, const void* data, bool cpu_packed, int64_t rows, int64_t cols, uint8_t* out);

// Row r of a device-layout matrix in f32.
void dequantize_device_row(DType type, const uint8_t* data, int64_t rows, int64_t cols, int64_t r, float* out);

}  // namespace ridge
