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

void encoder_attention_rows(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end, float* scratch) {
  if (active_isa() == Isa::Avx512Vnni) return encoder_attention_rows_avx512(a, head, begin, end, scratch);
  encoder_attention_rows_scalar(a, head, begin, end, scratch);
}

void encoder_attention_transpose_keys(const EncoderAttention& a, int64_t kv_head, float* kt) {
  const int64_t n = a.n_tokens, d = a.head_dim, np = encoder_attention_kt_width(n);
  const int64_t kv_stride = a.kv_stride > 0 ? a.kv_stride : a.stride;
  const float* k = a.k + kv_head * d;
  // Sixteen keys at a time: their rows stay in L1 while each column of kt is written contiguously.
  for (int64_t j0 = 0; j0 < np; j0 += 16) {
    const int64_t j1 = std::min(n, j0 + 16);
    for (int64_t c = 0; c < d; ++c) {
      float* col = kt + c * np + j0;
      for (int64_t j = j0; j < j1; ++j) col[j - j0] = k[j * kv_stride + c];
      for (int64_t j = std::max(j0, j1); j < j0 + 16; ++j) col[j - j0] = 0.0f;
    }
  }
}

int64_t encoder_attention_scratch_floats_scalar(int64_t n_tokens, int64_t head_dim) {
  return encoder_attention_kt_width(n_tokens) * head_dim + n_tokens;  // keys transposed, one query's scores
}

void encoder_attention_rows_scalar(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end,
                                   float* scratch) {
  if (begin >= end) return;
  const int64_t n = a.n_tokens, d = a.head_dim, np = encoder_attention_kt_width(n);
  const int64_t kv_stride = a.kv_stride > 0 ? a.kv_stride : a.stride;
  const int64_t kv_off = head / a.n_group * d;
  const float* kt = a.kt;  // (d, np)
  if (!kt) {
    encoder_attention_transpose_keys(a, head / a.n_group, scratch);
    kt = scratch;
  }
  float* scores = scratch + np * d;  // (n)
  for (int64_t i = begin; i < end; ++i) {
    const auto [lo, hi] = encoder_attention_keys(a, i);
    const float* qi = a.q + i * a.stride + head * d;
    std::fill(scores + lo, scores + hi, 0.0f);
    for (int64_t c = 0; c < d; ++c) {
      const float qc = qi[c] * a.scale;
      const float* row = kt + c * np;
      for (int64_t j = lo; j < hi; ++j) scores[j] += qc * row[j];
    }
    float max = scores[lo];
    for (int64_t j = lo + 1; j < hi; ++j) max = std::max(max, scores[j]);
    float sum = 0.0f;
    for (int64_t j = lo; j < hi; ++j) {
      scores[j] = exp_nonpositive(scores[j] - max);
      sum += scores[j];
    }
    const float inv = 1.0f / sum;
    float* oi = a.out + i * a.stride + head * d;
    std::fill(oi, oi + d, 0.0f);
    for (int64_t j = lo; j < hi; ++j) {
      const float p = scores[j] * inv;
      const float* vj = a.v + j * kv_stride + kv_off;
      for (int64_t c = 0; c < d; ++c) oi[c] += p * vj[c];
    }
  }
}

}  // namespace ridge::cpu
