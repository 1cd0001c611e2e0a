#pragma once
// The bodies of every low-rank version (kernels/cpu/low_rank.h), compiled once per ISA.
#include <algorithm>

#include "kernels/cpu/low_rank.h"

namespace ridge::cpu::detail {

inline void low_rank_down_body(const LowRank& m, const float* const* x, int64_t n, float* __restrict t) {
  const int64_t r = m.rank;
  std::fill_n(t, n * r, 0.0f);
  for (int64_t i = 0; i < m.d_in; ++i) {  // A^T's row i once for every row of the group
    const float* __restrict a = m.a_t + i * r;
    for (int64_t k = 0; k < n; ++k) {
      const float xi = x[k][i];
      float* __restrict tk = t + k * r;
      for (int64_t j = 0; j < r; ++j) tk[j] += xi * a[j];
    }
  }
}

inline void low_rank_up_body(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  const int64_t r = m.rank;
  for (int64_t j = 0; j < r; ++j) {  // B^T's row j (its column range) once for every row of the group
    const float* __restrict b = m.b_t + j * m.d_out;
    for (int64_t k = 0; k < n; ++k) {
      const float tj = t[k * r + j] * m.scale;
      float* __restrict yk = y[k];
      for (int64_t o = o_begin; o < o_end; ++o) yk[o] += tj * b[o];
    }
  }
}

}  // namespace ridge::cpu::detail
