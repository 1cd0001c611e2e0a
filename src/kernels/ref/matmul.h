#pragma once
// Reference matmul against a weight in its stored format: y = x · Wᵀ.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::ref {

// A row-major weight matrix in any dequantizable type: `rows` output features,
// each a contiguous row of `cols` inputs (a multiple of the type's block size).
struct WeightMatrix {
  DType type;
  const void* data;
  int64_t rows;
  int64_t cols;
  bool packed = false;  // rows in the CPU kernels' packed layout (kernels/cpu/packed_layout.h)
  float scale = 1.0f;   // multiplies every output (NVFP4's per-tensor factor, GGUF "<name>.scale")
  // FP8 checkpoints' scales: row r's values [g * group_cols, (g + 1) * group_cols) are multiplied by
  // group_scales[r * (cols / group_cols) + g] (per channel: group_cols = cols). Null: none.
  const float* group_scales = nullptr;
  int64_t group_cols = 0;
};

// Row r of `w` dequantized (as ref::dequantize_row does) is multiplied by its group scales here.
void apply_group_scales(const WeightMatrix& w, int64_t r, float* row);

// x: (n_tokens, w.cols) f32, y: (n_tokens, w.rows) f32.
// Single-threaded and plain: the truth the fast kernels are tested against. Each weight row is
// dequantized once and used for every token.
void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y);

}  // namespace ridge::ref
