// Integer dot kernels for AVX-512 VNNI with VL (256-bit EVEX vpdpbusd).
// GCC 12 flags its own AVX-512 headers with -Wuninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#define RIDGE_QDOT_FN quant_dot_avx512vnni_256
#define RIDGE_QDOT_NS avx512vnni_impl
#define RIDGE_QDOT_VNNI 1
#include "kernels/cpu/quant_dot_simd.h"

namespace ridge::cpu {

// K quants against several tokens: whole tiles of sixteen rows on 512-bit registers, the rest (and
// decode) on the 256-bit kernels; every path gives the same bits.
void quant_dot_avx512vnni(const QuantDotTask& task) {
  constexpr int64_t kWideMinTokens = 8;
  const bool k_quant = task.type == DType::Q4_K || task.type == DType::Q5_K || task.type == DType::Q6_K;
  if (!k_quant || task.n_tokens < kWideMinTokens) return quant_dot_avx512vnni_256(task);
  QuantDotTask rest = task;
  rest.row_begin = k_dot_tiles_avx512(task);
  if (rest.row_begin < rest.row_end) quant_dot_avx512vnni_256(rest);
}

}  // namespace ridge::cpu
