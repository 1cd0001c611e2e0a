#pragma once
// A kernel-friendly layout for Q4_0, Q4_1 and Q8_0 rows, made once at load: each row's blocks are
// regrouped four at a time as [4 f16 scales][4 f16 minimums (Q4_1)][the 4 blocks' quants], so one
// 512-bit load brings four blocks' quants and one 64-bit load their scales. A row keeps its byte
// size (a last group of 1-3 blocks has the same shape, shorter), so rows are still rows and a
// matrix can be repacked in place.
//
// The activations are packed to match, 4 blocks per group: for 4-bit weights the low and high
// 16 values of the 4 blocks side by side (so the nibbles need no shuffling), for Q8_0 the 4 blocks
// in order; then the 4 block scales and the 4 scaled block sums (the Q4 offsets enter through them).
#include <cstdint>

#include "core/dtype.h"
#include "kernels/cpu/act_quant.h"

namespace ridge::cpu {

inline constexpr int64_t kPackGroup = 4;

bool packable(DType type);  // Q4_0, Q4_1, Q8_0

// In place: every row of `rows` rows of `cols` values is regrouped as above.
void pack_rows(DType type, void* data, int64_t rows, int64_t cols);
// One packed row back to f32 (the embedding lookup of a packed tied matrix; tests).
void dequantize_packed_row(DType type, const void* row, float* out, int64_t cols);

// Activations for the packed kernels: one group of four 32-value blocks.
struct PackedActGroup {
  int8_t q[128];  // 4-bit weights: [b0..b3 values 0..15][b0..b3 values 16..31]; Q8_0: b0, b1, b2, b3
  float d[4];     // block scales (0 for the padding blocks of a last group)
  float s[4];     // scale x block sum: Q4_1 as ActBlock::s (llama.cpp's f16-rounded Q8_1 sum), Q4_0 exact
};
static_assert(sizeof(PackedActGroup) == 160);

inline int64_t packed_groups(int64_t cols) { return (cols / kActBlock + kPackGroup - 1) / kPackGroup; }
// One token's blocks (cols / 32 of them) regrouped for weights of `type`.
void pack_activations(DType type, const ActBlock* blocks, int64_t n_blocks, PackedActGroup* out);

// y[t * y_stride + r] = dot(packed weight row r, token t) for r in [row_begin, row_end).
struct PackedDotTask {
  DType type;
  const uint8_t* w;  // packed rows
  int64_t row_bytes;
  int64_t n_blocks;  // 32-value blocks per row
  int64_t row_begin, row_end;
  const PackedActGroup* acts;  // (n_tokens, packed_groups(cols))
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
};
void packed_dot_avx512vnni(const PackedDotTask& task);

}  // namespace ridge::cpu
