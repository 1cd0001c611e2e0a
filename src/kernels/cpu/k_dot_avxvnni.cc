// The wide K-quant kernels (k_dot_wide.h) on AVX-VNNI: eight rows per 256-bit register.
#include <immintrin.h>

#include <cstdint>

#define RIDGE_KW_VNNI 1
namespace ridge::cpu::k_avxvnni {
#include "kernels/cpu/k_dot_wide256.h"
}  // namespace ridge::cpu::k_avxvnni

#define RIDGE_KW_FN k_dot_tiles_avxvnni
#define RIDGE_KW_NS k_avxvnni
#define RIDGE_IQ_GATHER 1  // the codebook grids by vpgather (int8_group_simd.h)
#include "kernels/cpu/k_dot_wide.h"
