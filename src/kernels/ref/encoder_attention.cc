#include "kernels/ref/encoder_attention.h"

#include <cmath>
#include <vector>

namespace ridge::ref {

void encoder_attention(const float* q, const float* k, const float* v, float* out, int64_t stride, int64_t n_tokens,
                       int64_t n_head, int64_t head_dim, float scale) {
  std::vector<double> s(static_cast<size_t>(n_tokens));
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t i = 0; i < n_tokens; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < n_tokens; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < head_dim; ++c)
          dot += double(q[i * stride + h * head_dim + c]) * double(k[j * stride + h * head_dim + c]);
        s[size_t(j)] = dot * scale;
        max = std::max(max, s[size_t(j)]);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < n_tokens; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - max));
      for (int64_t c = 0; c < head_dim; ++c) {
        double acc = 0.0;
        for (int64_t j = 0; j < n_tokens; ++j) acc += s[size_t(j)] / sum * double(v[j * stride + h * head_dim + c]);
        out[i * stride + h * head_dim + c] = float(acc);
      }
    }
}

}  // namespace ridge::ref
