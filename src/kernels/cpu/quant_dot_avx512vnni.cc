// Integer dot kernels for AVX-512 VNNI with VL (256-bit EVEX vpdpbusd).
// GCC 12 flags its own AVX-512 headers with -Wuninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#define RIDGE_QDOT_FN quant_dot_avx512vnni_narrow
#define RIDGE_QDOT_NS avx512vnni_impl
#define RIDGE_QDOT_VNNI 1
#define RIDGE_IQ_GATHER 1  // the codebook grids by vpgather (int8_group_simd.h)
#include "kernels/cpu/quant_dot_simd.h"

namespace ridge::cpu {
void quant_dot_avx512vnni(const QuantDotTask& task) { quant_dot_narrow_and_wide(task, quant_dot_avx512vnni_narrow, k_dot_tiles_avx512); }
}  // namespace ridge::cpu
