#include "embed/gemma_encoder.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/cpu/encoder_attention.h"
#include "kernels/cpu/geglu_tanh.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"

namespace ridge {
namespace {

// Queries per attention work item: items are (text, head, chunk), so one long text still spreads
// over every thread; chunks start at multiples of this from the text's start.
constexpr int64_t kQueryChunk = 64;

// transformers multiplies the looked-up rows by sqrt(n_embd) as a tensor of the table's type
// (Gemma3TextScaledWordEmbedding): 27.7128 for 768 in f32, rounded again for a bf16 / f16 table.
float embedding_scale(int64_t n_embd, DType table) {
  const float scale = float(std::sqrt(double(n_embd)));
  if (table == DType::BF16) return bf16_to_f32(f32_to_bf16(scale));
  if (table == DType::F16) return f16_to_f32(f32_to_f16(scale));
  return scale;
}

}  // namespace

GemmaEncoder::GemmaEncoder(const GemmaEncoderModel& model, int n_threads)
    : model_(model),
      shape_{"gemma3", model.spec.n_vocab, model.spec.n_embd, model.spec.n_layer, model.spec.n_positions},
      rope_global_(model.spec.rope_theta, model.spec.head_dim, model.spec.n_positions),
      rope_local_(model.spec.rope_theta_local, model.spec.head_dim, model.spec.n_positions),
      pool_(std::make_unique<ThreadPool>(n_threads)) {
  attention_scratch_.resize(size_t(pool_->size()));
}

double GemmaEncoder::flops(const EncoderBatch& batch) const {
  const GemmaEncoderSpec& s = model_.spec;
  const double n = double(batch.tokens.size());
  const double per_token = 2.0 * double(s.n_embd) * double(2 * s.q_dim() + 2 * s.kv_dim() + 3 * s.n_ff);
  double attention = 0.0;  // QKᵀ and PV: 2 · 2 · head_dim · n_head per (query, key) pair
  for (int64_t l = 0; l < s.n_layer; ++l)
    for (int64_t i = 0; i < batch.n_texts(); ++i) {
      const int64_t len = batch.begin[size_t(i) + 1] - batch.begin[size_t(i)];
      cpu::EncoderAttention a{};
      a.n_tokens = len;
      a.window = s.sliding[size_t(l)] ? s.sliding_window : 0;
      double pairs = 0.0;
      for (int64_t t = 0; t < len; ++t)
        pairs += double(cpu::encoder_attention_keys(a, t).hi - cpu::encoder_attention_keys(a, t).lo);
      attention += 4.0 * double(s.q_dim()) * pairs;
    }
  return double(s.n_layer) * n * per_token + attention;
}

void GemmaEncoder::embed(const EncoderBatch& batch, std::vector<float>& x) {
  const GemmaEncoderSpec& s = model_.spec;
  const WeightRef& table = model_.weights.token_embd;
  const auto n = int64_t(batch.tokens.size());
  x.resize(size_t(n * s.n_embd));
  positions_.resize(size_t(n));
  for (int64_t i = 0; i < batch.n_texts(); ++i) {
    const int64_t first = batch.begin[size_t(i)], len = batch.begin[size_t(i) + 1] - first;
    if (len > s.n_positions) fail("a text of {} tokens is longer than the model's {} positions", len, s.n_positions);
    for (int64_t p = 0; p < len; ++p) positions_[size_t(first + p)] = int32_t(p);
  }
  for (int64_t t = 0; t < n; ++t) {
    const int32_t id = batch.tokens[size_t(t)];
    if (id < 0 || id >= s.n_vocab) fail("token id {} is outside the vocabulary of {}", id, s.n_vocab);
    if (!batch.type_ids.empty() && batch.type_ids[size_t(t)] != 0) fail("a Gemma encoder has no token types");
  }
  const float scale = embedding_scale(s.n_embd, table.type);
  pool_->parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* out = x.data() + t * s.n_embd;
      ref::dequantize_row(table.type, table.row(batch.tokens[size_t(t)]), out, s.n_embd);
      for (int64_t d = 0; d < s.n_embd; ++d) out[d] *= scale;
    }
  });
}

void GemmaEncoder::matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens,
                          const WeightRef& norm) {
  cpu::MatmulPrologue prologue;
  if (norm.present()) {
    prologue.kind = cpu::MatmulPrologue::Kind::RmsNorm;
    prologue.norm_weight = static_cast<const float*>(norm.data);
    prologue.eps = model_.spec.norm_eps;
  }
  cpu::matmul(std::span<const cpu::MatmulJob>(jobs.begin(), jobs.size()), x, n_tokens, *pool_, scratch_,
              cpu::active_isa(), prologue, /*prefill=*/true);
}

void GemmaEncoder::add_normed(float* x, float* y, const WeightRef& weight, int64_t n_tokens) {
  const int64_t n = model_.spec.n_embd;
  pool_->parallel_for(n_tokens, 1, [&](int64_t begin, int64_t end) {
    ref::rms_norm(y + begin * n, static_cast<const float*>(weight.data), end - begin, n, model_.spec.norm_eps,
                  y + begin * n);
    for (int64_t i = begin * n; i < end * n; ++i) x[i] += y[i];
  });
}

void GemmaEncoder::qk_norm_rope(const GemmaLayerWeights& w, const HfRope& rope, int64_t n_tokens) {
  const GemmaEncoderSpec& s = model_.spec;
  pool_->parallel_for(n_tokens, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* q = q_.data() + t * s.q_dim();
      float* k = k_.data() + t * s.kv_dim();
      ref::rms_norm(q, static_cast<const float*>(w.q_norm.data), s.n_head, s.head_dim, s.norm_eps, q);
      ref::rms_norm(k, static_cast<const float*>(w.k_norm.data), s.n_head_kv, s.head_dim, s.norm_eps, k);
      rope.apply(q, s.n_head, positions_[size_t(t)]);
      rope.apply(k, s.n_head_kv, positions_[size_t(t)]);
    }
  });
}

void GemmaEncoder::attention(const EncoderBatch& batch, bool sliding) {
  const GemmaEncoderSpec& s = model_.spec;
  const int64_t n_texts = batch.n_texts();
  const auto args = [&](int64_t text) {
    const int64_t first = batch.begin[size_t(text)], len = batch.begin[size_t(text) + 1] - first;
    cpu::EncoderAttention a{.q = q_.data() + first * s.q_dim(),
                            .k = k_.data() + first * s.kv_dim(),
                            .v = v_.data() + first * s.kv_dim(),
                            .out = attn_.data() + first * s.q_dim(),
                            .stride = s.q_dim(),
                            .n_tokens = len,
                            .head_dim = s.head_dim,
                            .scale = s.attention_scale};
    a.kv_stride = s.kv_dim();
    a.n_group = s.n_head / s.n_head_kv;
    a.window = sliding ? s.sliding_window : 0;
    return a;
  };
  // Each text's KV heads transposed once, for all the query heads and ranges that read them.
  std::vector<int64_t> kt_first(size_t(n_texts) + 1, 0);
  for (int64_t i = 0; i < n_texts; ++i)
    kt_first[size_t(i) + 1] =
        kt_first[size_t(i)] + s.n_head_kv * s.head_dim * cpu::encoder_attention_kt_width(args(i).n_tokens);
  kt_.resize(size_t(kt_first.back()));
  const auto kt_of = [&](int64_t text, int64_t kv_head) {
    return kt_.data() + kt_first[size_t(text)] +
           kv_head * s.head_dim * cpu::encoder_attention_kt_width(args(text).n_tokens);
  };
  pool_->parallel_for(n_texts * s.n_head_kv, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p)
      cpu::encoder_attention_transpose_keys(args(p / s.n_head_kv), p % s.n_head_kv,
                                            kt_of(p / s.n_head_kv, p % s.n_head_kv));
  });
  struct Item {
    int64_t text, head, begin, end;
  };
  std::vector<Item> items;
  for (int64_t i = 0; i < n_texts; ++i)
    for (int64_t h = 0; h < s.n_head; ++h)
      for (int64_t b = 0; b < args(i).n_tokens; b += kQueryChunk)
        items.push_back({i, h, b, std::min(args(i).n_tokens, b + kQueryChunk)});
  pool_->run([&](int thread, int n_threads) {
    std::vector<float>& scratch = attention_scratch_[size_t(thread)];
    const Range r = split_range(int64_t(items.size()), 1, thread, n_threads);
    for (int64_t k = r.begin; k < r.end; ++k) {
      const Item& it = items[size_t(k)];
      cpu::EncoderAttention a = args(it.text);
      a.kt = kt_of(it.text, it.head / a.n_group);
      const size_t need = size_t(cpu::encoder_attention_scratch_floats(a.n_tokens, s.head_dim));
      if (scratch.size() < need) scratch.resize(need);
      cpu::encoder_attention_rows(a, it.head, it.begin, it.end, scratch.data());
    }
  });
}

void GemmaEncoder::layer(const GemmaLayerWeights& w, bool sliding, const EncoderBatch& batch, std::vector<float>& x) {
  const GemmaEncoderSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  matmul({{as_matrix(w.wq), q_.data()}, {as_matrix(w.wk), k_.data()}, {as_matrix(w.wv), v_.data()}}, x.data(), n,
         w.attn_norm);
  qk_norm_rope(w, sliding ? rope_local_ : rope_global_, n);
  attention(batch, sliding);
  matmul({{as_matrix(w.wo), proj_.data()}}, attn_.data(), n, {});
  add_normed(x.data(), proj_.data(), w.post_attn_norm, n);
  matmul({{as_matrix(w.w_gate), gate_.data()}, {as_matrix(w.w_up), up_.data()}}, x.data(), n, w.ffn_norm);
  pool_->parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    cpu::geglu_tanh(gate_.data() + begin * s.n_ff, up_.data() + begin * s.n_ff, (end - begin) * s.n_ff);
  });
  matmul({{as_matrix(w.w_down), proj_.data()}}, gate_.data(), n, {});
  add_normed(x.data(), proj_.data(), w.post_ffn_norm, n);
}

void GemmaEncoder::forward(const EncoderBatch& batch, std::vector<float>& hidden) {
  const GemmaEncoderSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  embed(batch, hidden);
  if (n == 0) return;
  q_.resize(size_t(n * s.q_dim()));
  attn_.resize(q_.size());
  k_.resize(size_t(n * s.kv_dim()));
  v_.resize(k_.size());
  proj_.resize(size_t(n * s.n_embd));
  gate_.resize(size_t(n * s.n_ff));
  up_.resize(gate_.size());
  for (int64_t l = 0; l < s.n_layer; ++l) layer(model_.weights.layers[size_t(l)], s.sliding[size_t(l)], batch, hidden);
  const float* norm = static_cast<const float*>(model_.weights.output_norm.data);
  pool_->parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    ref::rms_norm(hidden.data() + begin * s.n_embd, norm, end - begin, s.n_embd, s.norm_eps,
                  hidden.data() + begin * s.n_embd);
  });
}

}  // namespace ridge
