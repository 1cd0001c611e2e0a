#include "kernels/ref/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::ref {

void attention(const AttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
               const float* k, const float* v, int64_t n_kv, float* out) {
  const int64_t group = args.n_heads / args.n_kv_heads;
  const int64_t kv_stride = args.n_kv_heads * args.head_dim;
#pragma omp parallel
  {
    std::vector<float> scores(static_cast<size_t>(n_kv));
#pragma omp for collapse(2) schedule(static)
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t h = 0; h < args.n_heads; ++h) {
        const float* qh = q + (t * args.n_heads + h) * args.head_dim;
        const int64_t kv_head = h / group;
        const int64_t n_seen = std::min<int64_t>(n_kv, int64_t(positions[t]) + 1);
        float max_score = -INFINITY;
        for (int64_t j = 0; j < n_seen; ++j) {
          const float* kj = k + j * kv_stride + kv_head * args.head_dim;
          float dot = 0.0f;
          for (int64_t d = 0; d < args.head_dim; ++d) dot += qh[d] * kj[d];
          scores[size_t(j)] = dot * args.scale;
          max_score = std::max(max_score, scores[size_t(j)]);
        }
        float denom = 0.0f;
        for (int64_t j = 0; j < n_seen; ++j) denom += scores[size_t(j)] = std::exp(scores[size_t(j)] - max_score);
        float* oh = out + (t * args.n_heads + h) * args.head_dim;
        std::fill(oh, oh + args.head_dim, 0.0f);
        for (int64_t j = 0; j < n_seen; ++j) {
          const float p = scores[size_t(j)] / denom;
          const float* vj = v + j * kv_stride + kv_head * args.head_dim;
          for (int64_t d = 0; d < args.head_dim; ++d) oh[d] += p * vj[d];
        }
      }
    }
  }
}

}  // namespace ridge::ref
