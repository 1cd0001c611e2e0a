#include "kernels/ref/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::ref {

void attention_head(const AttentionArgs& args, int64_t head, const float* q_head, int32_t position, const float* k,
                    const float* v, int64_t n_kv, float* scores, float* out_head) {
  const int64_t kv_head = head / (args.n_heads / args.n_kv_heads);
  const int64_t kv_stride = args.n_kv_heads * args.head_dim;
  const int64_t n_seen = std::min<int64_t>(n_kv, int64_t(position) + 1);
  const int64_t first = args.window > 0 ? std::max<int64_t>(0, int64_t(position) - args.window + 1) : 0;
  float max_score = -INFINITY;
  for (int64_t j = first; j < n_seen; ++j) {
    const float* kj = k + j * kv_stride + kv_head * args.head_dim;
    float dot = 0.0f;
    for (int64_t d = 0; d < args.head_dim; ++d) dot += q_head[d] * kj[d];
    scores[j] = dot * args.scale;
    max_score = std::max(max_score, scores[j]);
  }
  float denom = 0.0f;
  for (int64_t j = first; j < n_seen; ++j) denom += scores[j] = std::exp(scores[j] - max_score);
  std::fill(out_head, out_head + args.head_dim, 0.0f);
  for (int64_t j = first; j < n_seen; ++j) {
    const float p = scores[j] / denom;
    const float* vj = v + j * kv_stride + kv_head * args.head_dim;
    for (int64_t d = 0; d < args.head_dim; ++d) out_head[d] += p * vj[d];
  }
}

void attention(const AttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
               const float* k, const float* v, int64_t n_kv, float* out) {
  std::vector<float> scores(static_cast<size_t>(n_kv));
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < args.n_heads; ++h) {
      const int64_t offset = (t * args.n_heads + h) * args.head_dim;
      attention_head(args, h, q + offset, positions[t], k, v, n_kv, scores.data(), out + offset);
    }
}

}  // namespace ridge::ref
