// The low-rank passes with 16 lanes in AVX-512 registers (kernels/cpu/low_rank.h): up to four rows'
// sums held in registers, each A or B vector loaded once for all of them; mul then add, as the
// scalar loop rounds.
#include <immintrin.h>

#include "kernels/cpu/low_rank_body.h"

namespace ridge::cpu::low_rank_isa {
namespace {

struct Block {
  static constexpr int64_t kLanes = 16;
  static void down(const LowRank& m, const float* const* x, int64_t k0, int64_t rows, int64_t j0, float* t) {
    __m512 acc[detail::kLowRankRows] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t i = 0; i < m.d_in; ++i) {
      const int64_t at = i * m.rank + j0;
      const __m512 a = m.a_t16 ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.a_t16 + at))) : _mm512_loadu_ps(m.a_t + at);
      for (int64_t k = 0; k < rows; ++k) acc[k] = _mm512_add_ps(acc[k], _mm512_mul_ps(_mm512_set1_ps(x[k0 + k][i]), a));
    }
    for (int64_t k = 0; k < rows; ++k) _mm512_storeu_ps(t + (k0 + k) * m.rank + j0, acc[k]);
  }
  static void up(const LowRank& m, const float* t, float* const* y, int64_t k0, int64_t rows, int64_t o0) {
    __m512 acc[detail::kLowRankRows];
    for (int64_t k = 0; k < rows; ++k) acc[k] = _mm512_loadu_ps(y[k0 + k] + o0);
    for (int64_t j = 0; j < m.rank; ++j) {
      const int64_t at = j * m.d_out + o0;
      const __m512 b = m.b_t16 ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.b_t16 + at))) : _mm512_loadu_ps(m.b_t + at);
      for (int64_t k = 0; k < rows; ++k) acc[k] = _mm512_add_ps(acc[k], _mm512_mul_ps(_mm512_set1_ps(t[(k0 + k) * m.rank + j] * m.scale), b));
    }
    for (int64_t k = 0; k < rows; ++k) _mm512_storeu_ps(y[k0 + k] + o0, acc[k]);
  }
};

}  // namespace

void down_avx512(const LowRank& m, const float* const* x, int64_t n, float* t) { detail::low_rank_down_with<Block>(m, x, n, t); }
void up_avx512(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  detail::low_rank_up_with<Block>(m, t, n, y, o_begin, o_end);
}

}  // namespace ridge::cpu::low_rank_isa
