#pragma once
// Random weight rows for synthetic models and benchmarks. Values are close to normal with a chosen
// standard deviation (Irwin-Hall: a sum of four uniforms), drawn from a counter-based generator so
// a row depends only on (seed, row) and any number of threads give the same file.
#include <cstdint>

#include "core/dtype.h"

namespace ridge::synth {

// One row of `cols` weights in `type`, dtype_row_bytes(type, cols) bytes at `dst`. Types with a
// reference quantizer are quantized from f32 draws; Q4_K and Q6_K get random valid blocks with
// scales set for the same spread.
void random_row(DType type, int64_t cols, float stddev, uint64_t seed, uint64_t row, void* dst);

// True for the types random_row can make.
bool can_make_random(DType type);

// A 64-bit hash of (seed, index): the per-row stream of random_row, also used to derive seeds.
uint64_t mix_seed(uint64_t seed, uint64_t index);

}  // namespace ridge::synth
