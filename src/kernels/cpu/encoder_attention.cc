#include "kernels/cpu/encoder_attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/exp_nonpositive.h"
#include "kernels/cpu/isa.h"

namespace ridge::cpu {

int64_t encoder_attention_scratch_floats(int64_t n_tokens, int64_t head_dim) {
  return active_isa() == Isa::Avx512Vnni ? encoder_attention_scratch_floats_avx512(n_tokens, head_dim)
                                         : encoder_attention_scratch_floats_scalar(n_tokens, head_dim);
}

void encoder_attention_head(const EncoderAttention& a, int64_t head, float* scratch) {
  if (active_isa() == Isa::Avx512Vnni) return encoder_attention_head_avx512(a, head, scratch);
  encoder_attention_head_scalar(a, head, scratch);
}

int64_t encoder_attention_scratch_floats_scalar(int64_t n_tokens, int64_t head_dim) {
  return n_tokens * head_dim + n_tokens;  // keys transposed, one query's scores
}

void encoder_attention_head_scalar(const EncoderAttention& a, int64_t head, float* scratch) {
  const int64_t n = a.n_tokens, d = a.head_dim;
  float* kt = scratch;         // (d, n)
  float* scores = kt + n * d;  // (n)
  for (int64_t j = 0; j < n; ++j) {
    const float* kj = a.k + j * a.stride + head * d;
    for (int64_t c = 0; c < d; ++c) kt[c * n + j] = kj[c];
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = a.q + i * a.stride + head * d;
    std::fill(scores, scores + n, 0.0f);
    for (int64_t c = 0; c < d; ++c) {
      const float qc = qi[c] * a.scale;
      const float* row = kt + c * n;
      for (int64_t j = 0; j < n; ++j) scores[j] += qc * row[j];
    }
    float max = scores[0];
    for (int64_t j = 1; j < n; ++j) max = std::max(max, scores[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      scores[j] = exp_nonpositive(scores[j] - max);
      sum += scores[j];
    }
    const float inv = 1.0f / sum;
    float* oi = a.out + i * a.stride + head * d;
    std::fill(oi, oi + d, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float p = scores[j] * inv;
      const float* vj = a.v + j * a.stride + head * d;
      for (int64_t c = 0; c < d; ++c) oi[c] += p * vj[c];
    }
  }
}

}  // namespace ridge::cpu
