#pragma once
// f32 rows into GGUF block types, byte for byte what llama-quantize writes: ggml's reference
// quantizers when there are no importance weights, its importance-weighted searches when there
// are. The K types search for per-sub-block scales (quant/scale_search.h); the simple types
// without weights are ref::quantize_row.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::quant {

// True for F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL,
// IQ4_XS, IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0, MXFP4, NVFP4, F8_E4M3.
bool can_quantize(DType type);

// Encodes `n_rows` rows of `n_per_row` floats (a multiple of the type's block size) into
// n_rows * dtype_row_bytes(to, n_per_row) bytes at `dst`. `importance`, when not null, holds
// n_per_row non-negative weights shared by every row (an imatrix row); F32, F16, BF16, Q8_0,
// TQ1_0 and TQ2_0 ignore it, as llama.cpp does; IQ2_XXS, IQ2_XS and IQ1_S need it. Throws Error for
// a type without a quantizer, a bad size or missing importance.
void quantize_rows(DType to, const float* src, void* dst, int64_t n_rows, int64_t n_per_row, const float* importance);

// The per-family row encoders behind quantize_rows; `n` is already checked against the block size.
// Q2_K..Q6_K (k_quantize.cc); `importance` may be null.
void quantize_row_k(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// IQ4_NL and IQ4_XS (iq4_quantize.cc); `importance` may be null.
void quantize_row_iq4(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// IQ3_XXS and IQ3_S (iq3_quantize.cc); `importance` may be null.
void quantize_row_iq3(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// IQ2_XXS, IQ2_XS and IQ2_S (iq2_quantize.cc); `importance` may be null for IQ2_S only.
void quantize_row_iq2(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// IQ1_S and IQ1_M (iq1_quantize.cc); `importance` may be null for IQ1_M only.
void quantize_row_iq1(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// TQ1_0 and TQ2_0 (ternary_quantize.cc).
void quantize_row_ternary(DType type, const float* x, uint8_t* dst, int64_t n);
// Q4_0, Q4_1, Q5_0, Q5_1 with importance weights (weighted_quantize.cc); `importance` is not null.
void quantize_row_weighted(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance);
// MXFP4, NVFP4 (with its per-tensor factor `global`) with importance weights (fp4_search.cc): each
// block's scale among the nearest and its neighbours by weighted error; `importance` is not null.
void quantize_row_fp4_weighted(DType type, const float* x, uint8_t* dst, int64_t n, const float* importance, float global);

}  // namespace ridge::quant
