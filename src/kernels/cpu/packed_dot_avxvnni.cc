// The packed-layout kernels for AVX-VNNI (256-bit vpdpbusd, no AVX-512).
#define RIDGE_P256_FN packed_dot_avxvnni
#define RIDGE_P256_NS packed_avxvnni_impl
#define RIDGE_P256_VNNI 1
#include "kernels/cpu/packed_dot_256.h"
