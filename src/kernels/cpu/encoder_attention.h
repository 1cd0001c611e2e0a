#pragma once
// Bidirectional attention over one text (encoders: BERT, bidirectional Gemma): every token attends
// to the tokens of its own text (within `window` of it, when set), no cache. One call computes a
// range of one head's queries; the caller spreads (text, head, query range) over threads. The score
// loop runs along the keys, so it reads them transposed: the caller transposes each KV head once
// (encoder_attention_transpose_keys) for every query head and range that reads it, or the call
// transposes the text's keys into its scratch. Keys outside a query's window add exact zeros, so a
// query's result depends only on its own text: never on the other texts of a batch, on how the
// queries were split, or on the thread count.
#include <cstdint>

namespace ridge::cpu {

struct EncoderAttention {
  const float* q;  // (n_tokens, stride): head h's query at q + t * stride + h * head_dim
  const float* k;  // (n_tokens, kv_stride): KV head g's key at k + t * kv_stride + g * head_dim
  const float* v;  // as k
  float* out;      // as q: head h's output
  int64_t stride;
  int64_t n_tokens;
  int64_t head_dim;
  float scale;                // the scores' factor, 1 / sqrt(head_dim) for BERT
  int64_t kv_stride = 0;      // 0: stride (one KV head per query head)
  int64_t n_group = 1;        // query heads per KV head (GQA): head h reads KV head h / n_group
  int64_t window = 0;         // > 0: token i attends to token j only when |i - j| < window
  const float* kt = nullptr;  // the computed head's KV head transposed (encoder_attention_transpose_keys), or null
};

// The transposed keys of one KV head: (head_dim, encoder_attention_kt_width(n_tokens)), key j in
// column j, zeros past the last key. The same layout for every version.
inline int64_t encoder_attention_kt_width(int64_t n_tokens) { return (n_tokens + 15) / 16 * 16; }
void encoder_attention_transpose_keys(const EncoderAttention& a, int64_t kv_head, float* kt);

// The best version this CPU runs (AVX-512, else portable C++); scratch:
// encoder_attention_scratch_floats() floats, for that version (the transposed keys included).
int64_t encoder_attention_scratch_floats(int64_t n_tokens, int64_t head_dim);
// Queries [begin, end) of head `head`. Error-free: the caller checks the shapes.
void encoder_attention_rows(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end, float* scratch);
inline void encoder_attention_head(const EncoderAttention& a, int64_t head, float* scratch) {
  encoder_attention_rows(a, head, 0, a.n_tokens, scratch);
}

// Each version (tests).
int64_t encoder_attention_scratch_floats_scalar(int64_t n_tokens, int64_t head_dim);
void encoder_attention_rows_scalar(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end, float* scratch);
int64_t encoder_attention_scratch_floats_avx512(int64_t n_tokens, int64_t head_dim);
void encoder_attention_rows_avx512(const EncoderAttention& a, int64_t head, int64_t begin, int64_t end,
                                   float* scratch);  // AVX-512 CPUs only
inline void encoder_attention_head_scalar(const EncoderAttention& a, int64_t head, float* scratch) {
  encoder_attention_rows_scalar(a, head, 0, a.n_tokens, scratch);
}
inline void encoder_attention_head_avx512(const EncoderAttention& a, int64_t head, float* scratch) {
  encoder_attention_rows_avx512(a, head, 0, a.n_tokens, scratch);
}

// The keys query i sees: [lo, hi) of the text's n tokens.
struct KeyRange {
  int64_t lo, hi;
};
inline KeyRange encoder_attention_keys(const EncoderAttention& a, int64_t i) {
  if (a.window <= 0) return {0, a.n_tokens};
  return {i - a.window + 1 > 0 ? i - a.window + 1 : 0, i + a.window < a.n_tokens ? i + a.window : a.n_tokens};
}

}  // namespace ridge::cpu
