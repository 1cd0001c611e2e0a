#pragma once
// The element-wise steps of an encoder layer, fused and vectorised: bias adds, and the residual
// add + bias + LayerNorm of a post-norm block in one pass over each row. The portable version is the
// reference of the AVX-512 one's structure (sums in f32 lanes, reduced in a fixed order), and a
// row's result depends only on that row.
#include <cstdint>

namespace ridge::cpu {

// y[r] += bias for each of n_rows rows of n values.
void add_bias_rows(float* y, const float* bias, int64_t n_rows, int64_t n);
// x[r] = LayerNorm(x[r] + y[r] + y_bias) · weight + bias (y_bias may be null), for n_rows rows of n.
void add_layer_norm(float* x, const float* y, const float* y_bias, const float* weight, const float* bias, int64_t n_rows,
                    int64_t n, float eps);

void add_bias_rows_scalar(float* y, const float* bias, int64_t n_rows, int64_t n);
void add_layer_norm_scalar(float* x, const float* y, const float* y_bias, const float* weight, const float* bias,
                           int64_t n_rows, int64_t n, float eps);
void add_bias_rows_avx512(float* y, const float* bias, int64_t n_rows, int64_t n);  // AVX-512 CPUs only
void add_layer_norm_avx512(float* x, const float* y, const float* y_bias, const float* weight, const float* bias,
                           int64_t n_rows, int64_t n, float eps);

}  // namespace ridge::cpu
