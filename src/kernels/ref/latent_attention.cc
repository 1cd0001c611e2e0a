#include "kernels/ref/latent_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::ref {

void latent_attention(const LatentAttentionArgs& args, const float* q, const int32_t* positions, int64_t n_tokens,
                      const float* kv, int64_t n_kv, float* out) {
  const int64_t width = args.width();
  std::vector<double> scores(static_cast<size_t>(n_kv));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t n_seen = std::min<int64_t>(n_kv, int64_t(positions[t]) + 1);
    for (int64_t h = 0; h < args.n_heads; ++h) {
      const float* qh = q + (t * args.n_heads + h) * width;
      double max_score = -INFINITY;
      for (int64_t j = 0; j < n_seen; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < width; ++d) dot += double(qh[d]) * double(kv[j * width + d]);
        scores[size_t(j)] = dot * args.scale;
        max_score = std::max(max_score, scores[size_t(j)]);
      }
      double denom = 0.0;
      for (int64_t j = 0; j < n_seen; ++j) denom += scores[size_t(j)] = std::exp(scores[size_t(j)] - max_score);
      float* oh = out + (t * args.n_heads + h) * args.latent_dim;
      for (int64_t d = 0; d < args.latent_dim; ++d) {
        double sum = 0.0;
        for (int64_t j = 0; j < n_seen; ++j) sum += scores[size_t(j)] * double(kv[j * width + d]);
        oh[d] = float(sum / denom);
      }
    }
  }
}

}  // namespace ridge::ref
