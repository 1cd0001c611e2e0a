#include "kernels/cpu/low_rank.h"

#include "kernels/cpu/isa.h"
#include "kernels/cpu/low_rank_body.h"

namespace ridge::cpu {

namespace low_rank_isa {
void down_scalar(const LowRank& m, const float* const* x, int64_t n, float* t) {
  for (int64_t k0 = 0; k0 < n; k0 += detail::kLowRankRows) detail::down_tail(m, x, k0, std::min(detail::kLowRankRows, n - k0), 0, t);
}
void up_scalar(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  detail::up_tail(m, t, y, 0, n, o_begin, o_end);
}
}  // namespace low_rank_isa

void low_rank_down(const LowRank& m, const float* const* x, int64_t n, float* t) {
  switch (active_isa()) {
    case Isa::Avx512Vnni: return low_rank_isa::down_avx512(m, x, n, t);
    case Isa::Avx2:
    case Isa::AvxVnni: return low_rank_isa::down_avx2(m, x, n, t);
    default: return low_rank_isa::down_scalar(m, x, n, t);
  }
}

void low_rank_up(const LowRank& m, const float* t, int64_t n, float* const* y, int64_t o_begin, int64_t o_end) {
  switch (active_isa()) {
    case Isa::Avx512Vnni: return low_rank_isa::up_avx512(m, t, n, y, o_begin, o_end);
    case Isa::Avx2:
    case Isa::AvxVnni: return low_rank_isa::up_avx2(m, t, n, y, o_begin, o_end);
    default: return low_rank_isa::up_scalar(m, t, n, y, o_begin, o_end);
  }
}

}  // namespace ridge::cpu
