#pragma once
// The scalar low-rank passes (kernels/cpu/low_rank.h) and the lanes-at-a-time block structure the
// vector versions share. Every sum runs in one order: t[k][j] along i, y[k][o] along j, each step a
// product rounded then added (no fused multiply-add; the files are built with -ffp-contract=off),
// so a block of Lanes columns in vector registers gives each element the scalar loop's bits.
#include <algorithm>

#include "core/fp16.h"
#include "kernels/cpu/low_rank.h"

// Internal linkage: each ISA's file gets its own copy, compiled with its flags (one shared
// definition would let the linker pick one ISA's code for every caller).
namespace ridge::cpu::detail {
namespace {

constexpr int64_t kLowRankRows = 4;  // rows sharing each load of A or B

inline float a_at(const LowRank& m, int64_t i) { return m.a_t16 ? f16_to_f32(m.a_t16[i]) : m.a_t[i]; }
inline float b_at(const LowRank& m, int64_t i) { return m.b_t16 ? f16_to_f32(m.b_t16[i]) : m.b_t[i]; }

// t[k][j] for rows [k0, k0 + rows) and lanes [j_begin, r): the scalar order.
inline void down_tail(const LowRank& m, const float* const* x, int64_t k0, int64_t rows, int64_t j_begin, float* t) {
  const int64_t r = m.rank;
  for (int64_t k = k0; k < k0 + rows; ++k) {
    float* tk = t + k * r;
    std::fill(tk + j_begin, tk + r, 0.0f);
    for (int64_t i = 0; i < m.d_in; ++i) {
      const float xi = x[k][i];
      for (int64_t j = j_begin; j < r; ++j) tk[j] += xi * a_at(m, i * r + j);
    }
  }
}

// y[k][o] for rows [k0, k0 + rows) and columns [o_begin, o_end): the scalar order.
inline void up_tail(const LowRank& m, const float* t, float* const* y, int64_t k0, int64_t rows, int64_t o_begin, int64_t o_end) {
  for (int64_t k = k0; k < k0 + rows; ++k)
    for (int64_t j = 0; j < m.rank; ++j) {
      const float tj = t[k * m.rank + j] * m.scale;
      for (int64_t o = o_begin; o < o_end; ++o) y[k][o] += tj * b_at(m, j * m.d_out + o);
    }
}

// The passes with a vector block for `Lanes` lanes of up to kLowRankRows rows:
//   Block::down(m, x, k0, rows, j0, t), Block::up(m, t, y, k0, rows, o0)
template <typename Block>
inline void low_rank_down_with(const LowRank& m, const float* const* x, int64_t n, float* t) {
  const int64_t full = m.rank - m.rank % Block::kLanes;
  for (int64_t k0 = 0; k0 < n; k0 += kLowRankRows) {
    const int64_t rows = std::min(kLowRankRows, n - k0);
    for (int64_t j0 = 0; j0 < full; j0 += Block::kLanes) Block::down(m, x, k0, rows, j0, t);
    if (full < m.rank) down_tail(m, x, k0, rows, full, t);
  }
}

template <typename Block>
inline void low_rank_up_with(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  const int64_t full_end = o_begin + (o_end - o_begin) / Block::kLanes * Block::kLanes;
  for (int64_t k0 = 0; k0 < n; k0 += kLowRankRows) {
    const int64_t rows = std::min(kLowRankRows, n - k0);
    for (int64_t o0 = o_begin; o0 < full_end; o0 += Block::kLanes) Block::up(m, t, y, k0, rows, o0);
    if (full_end < o_end) up_tail(m, t, y, k0, rows, full_end, o_end);
  }
}

}  // namespace
}  // namespace ridge::cpu::detail
