#pragma once
// Prefill's GEMM on the AMX BF16 tile unit: the weights of a tile of sixteen rows are decoded once
// per call into bf16 B operands, the tokens' activations are rounded to bf16 once, and the tile
// unit accumulates in f32 across the whole row, so no per-block partial sum ever leaves the tiles
// (the exact int8 path stores one 16 x 16 tile of block sums per 32 values, which bounds it at a
// fraction of the tile unit's rate).
//
// The arithmetic, for a weight row r and a token t:
//   y = Σ_k bf16(w[r][k]) · bf16(x[t][k]), accumulated in f32 by the tile unit, k in order within
//   each 32-value step and steps in order;
// bf16(w) rounds the f32 weight the reference dequantizer gives (d·(q - 8), d·q + m, d·q; bf16/f16
// as stored) to nearest even, bf16(x) the activation. A token's result depends only on its own
// row of x and the weights, never on the other tokens of the batch or how rows are split among
// threads, so it is the same alone and batched. It is not the int8 path's result: the engine
// gives the prompt's positions this path and generated positions the int8 one (matmul.h).
#include <cstdint>

#include "core/dtype.h"

namespace ridge::cpu {

// Bytes of one 32-value step of a 16-token tile of bf16 activations (and of a B operand).
inline constexpr int64_t kBf16StepValues = 32;
inline constexpr int64_t kBf16StepWords = 16 * kBf16StepValues;

// The weight types the path reads: packed Q4_0, Q4_1, Q8_0, Q6_K (packed_layout.h), and rows of any block
// type the reference dequantizes (K-quants, legacy blocks) and BF16. Not F32 or F16 matrices
// (routers and heads kept wide on purpose), which keep their f32 kernels. The kernel itself also
// reads F32 and F16 rows (tests).
bool bf16_gemm_supported(DType type, bool packed);
bool amx_bf16_usable();  // AMX-BF16 and AVX-512 BF16, and the tile state granted (amx_usable)

// Token tile j (tokens 16j .. 16j+15 of x: (n_tokens, cols), zeros past the last) rounded to
// bf16 in the A operand's order: step s's 16 rows of 32 values at out + s * kBf16StepWords.
void tile_activations_bf16(const float* x, int64_t n_tokens, int64_t cols, int64_t j, uint16_t* out);
// One token's row x (cols) as row `row` (0..15) of the tile at `tile`; nullptr x writes zeros.
void put_activation_row_bf16(const float* x, int64_t cols, int64_t row, uint16_t* tile);

// y[t * y_stride + r] for r in [row_begin, row_end) (row_begin a multiple of 16) and every token,
// from the tiled activations `a` (token tile j at a + j * (cols / 32) * kBf16StepWords).
struct Bf16GemmTask {
  DType type;
  const uint8_t* w;
  bool packed;
  int64_t rows, cols;
  int64_t row_begin, row_end;
  const uint16_t* a;
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
};
void bf16_gemm_amx(const Bf16GemmTask& task);

// The naive reference (tests): row r's weights rounded to bf16, and the sum above in double.
void bf16_weight_row(DType type, const uint8_t* w, bool packed, int64_t rows, int64_t cols, int64_t r, uint16_t* out);
void bf16_gemm_reference(const Bf16GemmTask& task, const float* x);

}  // namespace ridge::cpu
