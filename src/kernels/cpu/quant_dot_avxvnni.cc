// Integer dot kernels for AVX2 + AVX-VNNI (256-bit vpdpbusd).
#define RIDGE_QDOT_FN quant_dot_avxvnni_narrow
#define RIDGE_QDOT_NS avxvnni_impl
#define RIDGE_QDOT_VNNI 1
#define RIDGE_IQ_GATHER 1  // the codebook grids by vpgather (int8_group_simd.h)
#include "kernels/cpu/quant_dot_simd.h"

namespace ridge::cpu {
void quant_dot_avxvnni(const QuantDotTask& task) { quant_dot_narrow_and_wide(task, quant_dot_avxvnni_narrow, k_dot_tiles_avxvnni); }
}  // namespace ridge::cpu
