// The wide K-quant kernels (k_dot_wide.h) on AVX2: eight rows per 256-bit register.
#include <immintrin.h>

#include <cstdint>

#define RIDGE_KW_VNNI 0
namespace ridge::cpu::k_avx2 {
#include "kernels/cpu/k_dot_wide256.h"
}  // namespace ridge::cpu::k_avx2

#define RIDGE_KW_FN k_dot_tiles_avx2
#define RIDGE_KW_NS k_avx2
#include "kernels/cpu/k_dot_wide.h"
