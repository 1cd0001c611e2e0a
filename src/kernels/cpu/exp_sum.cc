#include "kernels/cpu/exp_sum.h"

#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

double exp_sum_avx512(const float* x, int64_t n, float shift);  // exp_sum_avx512vnni.cc

double exp_sum_scalar(const float* x, int64_t n, float shift) {
  double lanes[16] = {};
  for (int64_t i = 0; i < n; ++i) lanes[i % 16] += double(exp_nonpositive(x[i] - shift));
  double sum = 0.0;
  for (double lane : lanes) sum += lane;
  return sum;
}

double exp_sum(const float* x, int64_t n, float shift) {
  static const bool wide = active_isa() == Isa::Avx512Vnni;
  return wide ? exp_sum_avx512(x, n, shift) : exp_sum_scalar(x, n, shift);
}

}  // namespace ridge::cpu
