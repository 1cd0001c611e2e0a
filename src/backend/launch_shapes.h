#pragma once
// Launch shapes of the CUDA forward pass that depend on the step, chosen on the host (and tested
// without a GPU): the CUDA-graph bucket of a decode step, GEMV or GEMM per token count, and the
// split-K of attention.
#include <array>
#include <cstdint>
#include <optional>

namespace ridge {

// Decode steps (one token per sequence) replay a graph captured for the smallest bucket that holds
// them; the extra rows are padding that writes no KV and whose logits are dropped.
inline constexpr std::array<int, 8> kDecodeBuckets = {1, 2, 4, 8, 16, 32, 64, 128};
std::optional<int> decode_bucket(int64_t n_sequences);  // nullopt for < 1 or > 128

enum class MatmulPath { Gemv, Gemm };
// Below gemm_min_tokens the skinny GEMV runs (a few tokens per launch, each weight read once per
// launch, the CPU's integer arithmetic for quantized weights, so short prompts give the CPU's
// numbers); from there on the weights' BF16 copies go through cuBLASLt (tensor cores).
MatmulPath matmul_path(int64_t n_tokens, int64_t gemm_min_tokens);

struct AttentionSplit {
  int n_splits = 1;
  int split_size = 1 << 30;  // positions per split (a multiple of the tile when n_splits > 1)
};
// Flash-decoding: when tokens x kv heads give fewer thread blocks than the GPU has multiprocessors,
// a history of up to max_positions is cut into splits of at least min_split positions so that
// about two blocks per multiprocessor run; never more than max_splits.
AttentionSplit attention_split(int64_t max_positions, int64_t n_tokens, int64_t n_kv_heads, int n_sms, int tile = 64,
                               int max_splits = 64, int min_split = 256);

}  // namespace ridge
