#pragma once
// The low-rank addend of one adapter matrix for some tokens: y_t += scale * (x_t * A^T) * B^T.
// Each token's sums run in one fixed order (along A^T's and B^T's rows), so its result is the same
// whatever else is in the batch and however the tokens are split over threads.
#include <cstdint>
#include <span>

#include "core/thread_pool.h"
#include "model/lora/lora_adapter.h"

namespace ridge::lora {

// x: rows of d_in (stride x_stride) already through the matmul's prologue (normed, activated);
// y: rows of d_out (stride y_stride). `tokens` picks the rows of both.
void add_lora_rows(const LoraMatrix& m, const float* x, int64_t x_stride, std::span<const int64_t> tokens, float* y,
                   int64_t y_stride, ThreadPool& pool);
// One token's addend (the reference and the body of add_lora_rows).
void add_lora_token(const LoraMatrix& m, const float* x, float* y, float* t_scratch);

}  // namespace ridge::lora
