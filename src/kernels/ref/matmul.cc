#include "kernels/ref/matmul.h"

#include <vector>

#include "kernels/ref/dequant.h"

namespace ridge::ref {

void apply_group_scales(const WeightMatrix& w, int64_t r, float* row) {
  if (!w.group_scales) return;
  const int64_t groups = w.cols / w.group_cols;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = g * w.group_cols; c < (g + 1) * w.group_cols; ++c) row[c] *= w.group_scales[r * groups + g];
}

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  const int64_t row_bytes = dtype_row_bytes(w.type, w.cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  std::vector<float> row(size_t(w.cols));  // (cols) one dequantized weight row
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, base + r * row_bytes, row.data(), w.cols);
    apply_group_scales(w, r, row.data());
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * w.cols;
      float sum = 0.0f;
      for (int64_t c = 0; c < w.cols; ++c) sum += row[size_t(c)] * xt[c];
      y[t * w.rows + r] = w.scale == 1.0f ? sum : sum * w.scale;
    }
  }
}

}  // namespace ridge::ref
