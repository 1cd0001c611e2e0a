#pragma once
// Bidirectional attention over one text (encoders: BERT, bidirectional Gemma): every token attends
// to every token of its own text, no cache, no mask. One call computes one head; the caller spreads
// (text, head) pairs over threads. The keys of the head are transposed into scratch once so the
// score loop runs along the keys, and a token's result never depends on the other texts of a batch.
#include <cstdint>

namespace ridge::cpu {

struct EncoderAttention {
  const float* q;  // (n_tokens, stride): head h's query at q + t * stride + h * head_dim
  const float* k;  // same layout (one KV head per query head)
  const float* v;
  float* out;      // same layout: head h's output
  int64_t stride;
  int64_t n_tokens;
  int64_t head_dim;
  float scale;     // the scores' factor, 1 / sqrt(head_dim) for BERT
};

// The best version this CPU runs (AVX-512, else portable C++); scratch:
// encoder_attention_scratch_floats() floats, for that version.
int64_t encoder_attention_scratch_floats(int64_t n_tokens, int64_t head_dim);
void encoder_attention_head(const EncoderAttention& a, int64_t head, float* scratch);
// Each version (tests).
int64_t encoder_attention_scratch_floats_scalar(int64_t n_tokens, int64_t head_dim);
void encoder_attention_head_scalar(const EncoderAttention& a, int64_t head, float* scratch);
int64_t encoder_attention_scratch_floats_avx512(int64_t n_tokens, int64_t head_dim);
void encoder_attention_head_avx512(const EncoderAttention& a, int64_t head, float* scratch);  // AVX-512 CPUs only

}  // namespace ridge::cpu
