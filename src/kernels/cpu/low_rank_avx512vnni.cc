#include "kernels/cpu/low_rank_body.h"

namespace ridge::cpu::low_rank_isa {

void down_avx512(const LowRank& m, const float* const* x, int64_t n, float* t) { detail::low_rank_down_body(m, x, n, t); }
void up_avx512(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  detail::low_rank_up_body(m, t, n, y, o_begin, o_end);
}

}  // namespace ridge::cpu::low_rank_isa
