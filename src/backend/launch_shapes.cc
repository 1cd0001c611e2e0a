#include "backend/launch_shapes.h"

#include <algorithm>

namespace ridge {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::optional<int> decode_bucket(int64_t n_sequences) {
  for (int b : kDecodeBuckets)
    if (n_sequences >= 1 && n_sequences <= b) return b;
  return std::nullopt;
}

MatmulPath matmul_path(int64_t n_tokens, int64_t gemm_min_tokens) {
  return n_tokens < gemm_min_tokens ? MatmulPath::Gemv : MatmulPath::Gemm;
}

AttentionSplit attention_split(int64_t max_positions, int64_t n_tokens, int64_t n_kv_heads, int n_sms, int tile,
                               int max_splits, int min_split) {
  const int64_t blocks = n_tokens * n_kv_heads;
  if (blocks >= n_sms || max_positions <= min_split) return {};
  const int64_t wanted = ceil_div(2 * int64_t(n_sms), blocks);
  int64_t split = std::max<int64_t>(ceil_div(ceil_div(max_positions, wanted), tile) * tile, min_split);
  int64_t n = ceil_div(max_positions, split);
  if (n > max_splits) {
    split = ceil_div(ceil_div(max_positions, max_splits), tile) * tile;
    n = ceil_div(max_positions, split);
  }
  if (n <= 1) return {};
  return {int(n), int(split)};
}

}  // namespace ridge
