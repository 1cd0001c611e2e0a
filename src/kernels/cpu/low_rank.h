#pragma once
// Low-rank addends (LoRA's; model/lora): y += scale * (x * A^T) * B^T for rows of x, with A^T
// (d_in, rank) and B^T (rank, d_out) row-major, in two passes so that a group of rows reads A and
// B once: down (t = x A^T, each row's sums along d_in) and up (y += scale t B^T along the rank,
// for a range of output columns). Every row's sums run in one fixed order whatever the group or
// the column range, so a row's result never depends on its batch. The ISA versions are the same
// loops compiled for wider vectors, without fused multiply-adds (-ffp-contract=off): every version
// gives the scalar version's bits.
#include <cstdint>

namespace ridge::cpu {

struct LowRank {
  int64_t rank = 0, d_in = 0, d_out = 0;
  const float* a_t = nullptr;  // (d_in, rank)
  const float* b_t = nullptr;  // (rank, d_out)
  float scale = 1.0f;
  // Or A^T and B^T in f16 (half the bytes a step reads; converted to f32 in registers) when set.
  const uint16_t* a_t16 = nullptr;
  const uint16_t* b_t16 = nullptr;
};

// t (n, rank) = rows x[0..n) times A^T.
void low_rank_down(const LowRank& m, const float* const* x, int64_t n, float* t);
// y[k][o] += scale * t[k] . B^T[:, o] for o in [o_begin, o_end), k < n.
void low_rank_up(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end);

// Per ISA (the two above pick the best this CPU runs).
namespace low_rank_isa {
void down_scalar(const LowRank& m, const float* const* x, int64_t n, float* t);
void up_scalar(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end);
void down_avx2(const LowRank& m, const float* const* x, int64_t n, float* t);  // AVX2 + FMA CPUs only
void up_avx2(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end);
void down_avx512(const LowRank& m, const float* const* x, int64_t n, float* t);  // AVX-512 CPUs only
void up_avx512(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end);
}  // namespace low_rank_isa

}  // namespace ridge::cpu
