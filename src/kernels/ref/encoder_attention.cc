#include "kernels/ref/encoder_attention.h"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace ridge::ref {

void encoder_attention(const float* q, const float* k, const float* v, float* out, int64_t stride, int64_t n_tokens,
                       int64_t n_head, int64_t head_dim, float scale, int64_t kv_stride, int64_t n_group,
                       int64_t window) {
  if (kv_stride <= 0) kv_stride = stride;
  const auto sees = [&](int64_t i, int64_t j) { return window <= 0 || std::llabs(i - j) < window; };
  std::vector<double> s(static_cast<size_t>(n_tokens));
  for (int64_t h = 0; h < n_head; ++h) {
    const int64_t qo = h * head_dim, ko = h / n_group * head_dim;
    for (int64_t i = 0; i < n_tokens; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < n_tokens; ++j) {
        if (!sees(i, j)) continue;
        double dot = 0.0;
        for (int64_t c = 0; c < head_dim; ++c)
          dot += double(q[i * stride + qo + c]) * double(k[j * kv_stride + ko + c]);
        s[size_t(j)] = dot * scale;
        max = std::max(max, s[size_t(j)]);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < n_tokens; ++j) sum += sees(i, j) ? (s[size_t(j)] = std::exp(s[size_t(j)] - max)) : 0.0;
      for (int64_t c = 0; c < head_dim; ++c) {
        double acc = 0.0;
        for (int64_t j = 0; j < n_tokens; ++j)
          if (sees(i, j)) acc += s[size_t(j)] / sum * double(v[j * kv_stride + ko + c]);
        out[i * stride + qo + c] = float(acc);
      }
    }
  }
}

}  // namespace ridge::ref
