#include "kernels/ref/matmul.h"

#include <vector>

#include "kernels/ref/dequant.h"

namespace ridge::ref {

void matmul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y) {
  const int64_t row_bytes = dtype_row_bytes(w.type, w.cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  std::vector<float> row(size_t(w.cols));  // (cols) one dequantized weight row
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, base + r * row_bytes, row.data(), w.cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * w.cols;
      float sum = 0.0f;
      for (int64_t c = 0; c < w.cols; ++c) sum += row[size_t(c)] * xt[c];
      y[t * w.rows + r] = w.scale == 1.0f ? sum : sum * w.scale;
    }
  }
}

}  // namespace ridge::ref
