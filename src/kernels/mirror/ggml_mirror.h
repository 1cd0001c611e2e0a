#pragma once
// Kernels that repeat, rounding for rounding, the arithmetic of llama.cpp's CPU backend as built
// for AVX2 + FMA + F16C (the build tests/conformance uses as its oracle), so that a forward pass
// made of them (model/llama_mirror.h) returns the reference's logits to the bit.
//
// Where the reference fuses a multiply into an add (with an intrinsic, or because its compiler
// contracted the C expression: checked in its machine code), these fuse too, and nowhere else:
// the files compile with -ffp-contract=off. Sums run in the reference's lane order: its 8-lane
// accumulators, the order of its horizontal adds, its double-precision sums. Activations are
// quantized as it quantizes them (Q8_1 for Q4_1 weights, Q8_0 for Q8_0 weights), queries and
// attention probabilities rounded to f16 as its f16 matrix products round them, and exp is its
// vector approximation (max error 1.45 + 0.5 ulp), not libm's.
//
// The native kernels (kernels/cpu) are faster and at least as accurate. These exist to show
// ridge's forward pass equal to the reference step for step, which near-ties in a small
// quantized model otherwise hide: the mirror turns "close" into "identical, or a named bug".
#include <cstdint>

namespace ridge::mirror {

// AVX2 + FMA + F16C, which the reference's build and these kernels need.
bool supported();

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[32];
};
struct BlockQ8_1 {
  uint16_t d;  // f16 scale
  uint16_t s;  // f16 of scale x the sum of qs, rounded from the unrounded scale
  int8_t qs[32];
};

// n values (a multiple of 32) to blocks: scale max|x| / 127, quants round-half-even of x * (127 / max|x|).
void quantize_q8_0(const float* x, int64_t n, BlockQ8_0* out);
void quantize_q8_1(const float* x, int64_t n, BlockQ8_1* out);

// One weight row in GGUF block layout against one quantized activation row: eight lanes, lane l
// summing the exact integer products of values 4l..4l+3 of each block, scaled and fused block by
// block; the lanes added in the reference's order, then (Q4_1) the minimums' running sum.
float dot_q4_1_q8_1(const uint8_t* row, const BlockQ8_1* act, int64_t n_blocks);
float dot_q8_0_q8_0(const uint8_t* row, const BlockQ8_0* act, int64_t n_blocks);

// Which of the reference's f16 matrix products ran: its tiled GEMM when the batch has two or more
// tokens (one 8-lane accumulator per result), its vector dot for a single token (four).
enum class DotOrder { Tiled, Vector };

// sum_i x[i * x_stride] * y[i] over n values that are f16 numbers held as f32, in `order`.
// Vector order needs n % 32 == 0 unless the missing tail is zeros (the reference's padded cache).
float dot_f16(const float* x, int64_t x_stride, const float* y, int64_t n, DotOrder order);

// The reference's vector exp and SiLU, one value at a time (each lane is independent).
float exp_approx(float x);
float silu(float x);

// y = (x * (1 / sqrt(mean(x^2) + eps))) * w, the mean summed in double.
void rms_norm_mul(const float* x, const float* w, int64_t n, float eps, float* y);

// RoPE, adjacent pairs ("normal" ordering), in place on n_heads heads of head_dim values, the
// first rope_dim of each rotated: angles p * base^(-2i/rope_dim) built by repeated
// multiplication, as the reference builds them.
void rope_normal(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dim, int32_t position, float base);

// n halves to f32 (exact), with F16C.
void f16_to_f32_row(const uint16_t* x, int64_t n, float* y);

// One query head over n_pos cached positions: keys transposed (head_dim, n_pos) and values
// (n_pos, head_dim), f16 values held as f32. scores = f16(q) . k, scaled, softmax with the reference's exp and sums, probabilities
// rounded to f16, then P . V. scratch: head_dim + round_up(n_pos, 8) floats.
void attend_head(const float* q, const float* keys_t, const float* values, int64_t n_pos, int64_t head_dim, float scale,
                 DotOrder order, float* scratch, float* out);

}  // namespace ridge::mirror
