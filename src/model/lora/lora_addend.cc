#include "model/lora/lora_addend.h"

#include <algorithm>
#include <vector>

namespace ridge::lora {

void add_lora_token(const LoraMatrix& m, const float* __restrict x, float* __restrict y, float* __restrict t) {
  const int64_t r = m.rank;
  std::fill_n(t, r, 0.0f);
  const float* a_t = m.a_t.data();
  for (int64_t i = 0; i < m.d_in; ++i) {  // t = x A^T, accumulated along d_in (vectorised over the rank)
    const float xi = x[i];
    const float* row = a_t + i * r;
    for (int64_t j = 0; j < r; ++j) t[j] += xi * row[j];
  }
  for (int64_t j = 0; j < r; ++j) t[j] *= m.scale;
  const float* b_t = m.b_t.data();
  for (int64_t j = 0; j < r; ++j) {  // y += t B^T, accumulated along the rank (vectorised over d_out)
    const float tj = t[j];
    const float* row = b_t + j * m.d_out;
    for (int64_t o = 0; o < m.d_out; ++o) y[o] += tj * row[o];
  }
}

void add_lora_rows(const LoraMatrix& m, const float* x, int64_t x_stride, std::span<const int64_t> tokens, float* y,
                   int64_t y_stride, ThreadPool& pool) {
  const auto n = int64_t(tokens.size());
  if (n == 0) return;
  const auto run = [&](int64_t begin, int64_t end) {
    std::vector<float> t(size_t(m.rank));
    for (int64_t k = begin; k < end; ++k) add_lora_token(m, x + tokens[size_t(k)] * x_stride, y + tokens[size_t(k)] * y_stride, t.data());
  };
  if (n == 1) return run(0, 1);
  pool.parallel_for(n, 1, run);
}

}  // namespace ridge::lora
