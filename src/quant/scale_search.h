#pragma once
// The scale searches behind the GGUF block quantizers: given a group of values, find the integer
// levels and the float scale (and min) that fit them best. Each mirrors one of ggml's searches
// (named below) operation for operation in f32, because llama-quantize's output is defined by
// those exact roundings; a mathematically equal rewrite would flip levels on ties.
#include <cstdint>

namespace ridge::quant {

// Round to nearest, ties to even, by adding 1.5 * 2^23 and reading the mantissa (ggml's
// nearest_int); valid for |v| < 2^22, and it is what the searches use everywhere.
int nearest_int(float v);

// Stores `v` as f16 at `p` (unaligned) and returns the value a decoder reads back.
float store_f16(uint8_t* p, float v);

// Groups whose largest magnitude is below this are all zero (ggml's GROUP_MAX_EPS).
inline constexpr float kGroupMaxEps = 1e-15f;

// x ≈ scale * (L - nmax), L in [0, 2 * nmax): the symmetric weighted least-squares search over
// 19 candidate reciprocal scales (ggml's make_qx_quants with rmse_type 1). `weights` may be
// null: then each value weighs x².
float fit_symmetric(int n, int nmax, const float* x, int8_t* L, const float* weights);

// The same model with x² weights, refined by moving one level at a time while the fit improves
// (ggml's make_q3_quants with do_rmse).
float fit_symmetric_refined(int n, int nmax, const float* x, int8_t* L);

// x ≈ scale * L - the_min, L in [0, nmax], the_min >= 0: a weighted search over nstep + 1
// candidate ranges, scoring each by absolute (use_mad) or squared error (ggml's
// make_qkx2_quants; its make_qkx3_quants is the same computation when weights are given, as
// every caller gives them). `scratch` holds n levels.
float fit_affine(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* scratch,
                 float rmin, float rdelta, int nstep, bool use_mad);

// x ≈ scale * L, L in [0, nmax], for non-negative x such as sub-block scales: weighted search
// plus level refinement (ggml's make_qp_quants).
float fit_positive(int n, int nmax, const float* x, uint8_t* L, const float* weights);

}  // namespace ridge::quant
