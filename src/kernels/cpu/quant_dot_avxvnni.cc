// Integer dot kernels for AVX2 + AVX-VNNI (256-bit vpdpbusd).
#define RIDGE_QDOT_FN quant_dot_avxvnni
#define RIDGE_QDOT_NS avxvnni_impl
#define RIDGE_QDOT_VNNI 1
#include "kernels/cpu/quant_dot_simd.h"
