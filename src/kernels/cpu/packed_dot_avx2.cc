// The packed-layout kernels for AVX2 + FMA + F16C (compiled with those flags only).
#define RIDGE_P256_FN packed_dot_avx2
#define RIDGE_P256_NS packed_avx2_impl
#define RIDGE_P256_VNNI 0
#include "kernels/cpu/packed_dot_256.h"
