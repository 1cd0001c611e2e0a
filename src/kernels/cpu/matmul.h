#pragma once
// The CPU matmul: y = x · Wᵀ against weights in their stored format, several matrices that read
// the same input in one parallel region (Q, K, V; gate, up). 4- and 8-bit block weights run as
// integer dot products against activations quantized once per call; other types are dequantized
// a row at a time and dotted in f32.
#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/matmul.h"

namespace ridge::cpu {

struct MatmulJob {
  ref::WeightMatrix w;  // (rows, cols)
  float* y;             // (n_tokens, w.rows)
};

// Element-wise work fused into the matmul's activation pass: each token's row is transformed in a
// small buffer and quantized from there, so the transformed matrix is never written out and read
// back (and the work runs on every thread). The same bits as running ref::rms_norm / cpu::swiglu /
// cpu::geglu_table (llama.cpp's table GELU, within f16 rounding of ref::geglu) first.
struct MatmulPrologue {
  enum class Kind { None, RmsNorm, SwiGlu, GeGlu } kind = Kind::None;
  const float* norm_weight = nullptr;  // RmsNorm: the norm's weight (cols), with eps
  float eps = 0.0f;
  const float* up = nullptr;  // SwiGlu, GeGlu: x is the gate; up (n_tokens, cols)
};

// One input of a grouped matmul: n_tokens rows of x, transformed by its prologue. A prefill input's
// rows are positions of prompts: on AMX BF16 CPUs they go through the bf16 tile GEMM (bf16_gemm.h)
// where it reads the weights, every other row through the int8 / f32 kernels. Which path a row
// takes depends only on that flag, so a token's result is the same whatever else is in the batch.
struct MatmulInput {
  const float* x;
  int64_t n_tokens;
  MatmulPrologue prologue;
  bool prefill = false;
};

// A job of a grouped matmul and the input it multiplies: y (inputs[input].n_tokens, w.rows).
struct GroupedMatmulJob {
  MatmulJob job;
  int32_t input = 0;
};

// Buffers reused across calls (one per forward pass).
struct MatmulScratch {
  std::vector<GroupedMatmulJob> grouped;    // matmul's jobs as one grouped call
  std::vector<int64_t> input_first;         // per input: its first row in the buffers below
  std::vector<float> transformed;           // the prologue's rows, when a kernel needs them in f32
  std::vector<uint16_t> bf16;               // (all tokens, cols) the input rounded to bf16, for BF16 weights
  std::vector<ActBlock> acts;               // (all tokens, cols / 32)
  std::vector<int8_t> tiled_q;              // acts tiled for the AMX kernel (TiledActs), inputs one after another
  std::vector<float> tiled_scales;
  std::vector<int64_t> input_tile_first;    // per input: its first tile there (-1: its jobs do not use AMX)
  std::vector<uint16_t> bf16_tiles;         // prefill inputs' rows in bf16 tiles (bf16_gemm.h), inputs in turn
  std::vector<int64_t> input_bf16_tile_first;
  std::vector<uint8_t> input_quantized;     // per input: some job reads it as int8 blocks
  std::vector<std::vector<float>> rows;     // per thread: one dequantized weight row
};

// Every job must have the same cols (they share x: (n_tokens, cols)), transformed by `prologue`.
void matmul(std::span<const MatmulJob> jobs, const float* x, int64_t n_tokens, ThreadPool& pool, MatmulScratch& scratch,
            Isa isa = active_isa(), const MatmulPrologue& prologue = {}, bool prefill = false);

// Several inputs, each with the jobs that read it (a MoE layer's experts, each over the tokens
// routed to it), in one pass: the inputs are quantized together and every job's rows share one
// parallel region. Each job's result is the bits matmul gives it alone. Every job must have the
// same cols.
void matmul_grouped(std::span<const MatmulInput> inputs, std::span<const GroupedMatmulJob> jobs, ThreadPool& pool,
                    MatmulScratch& scratch, Isa isa = active_isa());

}  // namespace ridge::cpu
