#include "embed/encoder_forward.h"

#include <cmath>

#include "core/error.h"
#include "kernels/cpu/encoder_attention.h"
#include "kernels/cpu/gelu_erf.h"
#include "kernels/cpu/layer_norm.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"

namespace ridge {

EncoderForward::EncoderForward(const EncoderModel& model, int n_threads)
    : model_(model),
      shape_{model.spec.arch, model.spec.n_vocab, model.spec.n_embd, model.spec.n_layer, model.spec.n_positions},
      pool_(std::make_unique<ThreadPool>(n_threads)) {
  attention_scratch_.resize(size_t(pool_->size()));
}

double EncoderForward::flops(const EncoderBatch& batch) const {
  const EncoderSpec& s = model_.spec;
  const double n = double(batch.tokens.size());
  const double per_token = 2.0 * (4.0 * double(s.n_embd) * double(s.n_embd) + 2.0 * double(s.n_embd) * double(s.n_ff));
  double attention = 0.0;  // QKᵀ and PV: 2 · 2 · L² · n_embd per text
  for (int64_t i = 0; i < batch.n_texts(); ++i) {
    const double l = double(batch.begin[size_t(i) + 1] - batch.begin[size_t(i)]);
    attention += 4.0 * l * l * double(s.n_embd);
  }
  return double(s.n_layer) * (n * per_token + attention);
}

void EncoderForward::embed(const EncoderBatch& batch, std::vector<float>& x) const {
  const EncoderSpec& s = model_.spec;
  const EncoderWeights& w = model_.weights;
  const auto n = int64_t(batch.tokens.size());
  x.resize(size_t(n * s.n_embd));
  std::vector<float> row(size_t(s.n_embd));
  const auto add_row = [&](const WeightRef& table, int64_t r, float* out) {
    ref::dequantize_row(table.type, table.row(r), row.data(), s.n_embd);
    for (int64_t d = 0; d < s.n_embd; ++d) out[d] += row[size_t(d)];
  };
  for (int64_t i = 0; i < batch.n_texts(); ++i) {
    const int64_t first = batch.begin[size_t(i)], len = batch.begin[size_t(i) + 1] - first;
    if (len > s.n_positions) fail("a text of {} tokens is longer than the model's {} positions", len, s.n_positions);
    for (int64_t p = 0; p < len; ++p) {
      const int64_t t = first + p;
      const int32_t id = batch.tokens[size_t(t)];
      if (id < 0 || id >= s.n_vocab) fail("token id {} is outside the vocabulary of {}", id, s.n_vocab);
      float* out = x.data() + t * s.n_embd;
      std::fill(out, out + s.n_embd, 0.0f);
      add_row(w.token_embd, id, out);
      add_row(w.position_embd, p, out);
      const int32_t type = batch.type_ids.empty() ? 0 : batch.type_ids[size_t(t)];
      if (w.token_types.present()) {
        if (type < 0 || type >= s.n_token_types) fail("token type {} is outside the model's {}", type, s.n_token_types);
        add_row(w.token_types, type, out);
      } else if (type != 0) {
        fail("the model has no token types, and a text asks for type {}", type);
      }
    }
  }
  ref::layer_norm(x.data(), static_cast<const float*>(w.embd_norm.data), static_cast<const float*>(w.embd_norm_b.data), n,
                  s.n_embd, s.norm_eps, x.data());
}

void EncoderForward::matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens) {
  cpu::matmul(std::span<const cpu::MatmulJob>(jobs.begin(), jobs.size()), x, n_tokens, *pool_, scratch_,
              cpu::active_isa(), {}, /*prefill=*/true);
}

void EncoderForward::add_bias(float* y, const WeightRef& bias, int64_t n_tokens) {
  const int64_t n = bias.cols;
  pool_->parallel_for(n_tokens, 1, [&](int64_t begin, int64_t end) {
    cpu::add_bias_rows(y + begin * n, static_cast<const float*>(bias.data), end - begin, n);
  });
}

void EncoderForward::add_and_norm(float* x, const float* y, const WeightRef& y_bias, const WeightRef& weight,
                                  const WeightRef& bias, int64_t n_tokens) {
  const int64_t n = model_.spec.n_embd;
  pool_->parallel_for(n_tokens, 1, [&](int64_t begin, int64_t end) {
    cpu::add_layer_norm(x + begin * n, y + begin * n, static_cast<const float*>(y_bias.data),
                        static_cast<const float*>(weight.data), static_cast<const float*>(bias.data), end - begin, n,
                        model_.spec.norm_eps);
  });
}

void EncoderForward::attention(const EncoderBatch& batch) {
  const EncoderSpec& s = model_.spec;
  const int64_t n_pairs = batch.n_texts() * s.n_head;
  const float scale = 1.0f / std::sqrt(float(s.head_dim()));
  pool_->run([&](int thread, int n_threads) {
    std::vector<float>& scratch = attention_scratch_[size_t(thread)];
    const Range r = split_range(n_pairs, 1, thread, n_threads);
    for (int64_t pair = r.begin; pair < r.end; ++pair) {
      const int64_t text = pair / s.n_head, head = pair % s.n_head;
      const int64_t first = batch.begin[size_t(text)], len = batch.begin[size_t(text) + 1] - first;
      if (len == 0) continue;
      const size_t need = size_t(cpu::encoder_attention_scratch_floats(len, s.head_dim()));
      if (scratch.size() < need) scratch.resize(need);
      const int64_t off = first * s.n_embd;
      cpu::encoder_attention_head({q_.data() + off, k_.data() + off, v_.data() + off, attn_.data() + off, s.n_embd, len,
                                   s.head_dim(), scale},
                                  head, scratch.data());
    }
  });
}

void EncoderForward::layer(const EncoderLayerWeights& w, const EncoderBatch& batch, std::vector<float>& x) {
  const EncoderSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  matmul({{as_matrix(w.wq), q_.data()}, {as_matrix(w.wk), k_.data()}, {as_matrix(w.wv), v_.data()}}, x.data(), n);
  add_bias(q_.data(), w.bq, n);
  add_bias(k_.data(), w.bk, n);
  add_bias(v_.data(), w.bv, n);
  attention(batch);
  matmul({{as_matrix(w.wo), proj_.data()}}, attn_.data(), n);
  add_and_norm(x.data(), proj_.data(), w.bo, w.attn_norm, w.attn_norm_b, n);
  matmul({{as_matrix(w.w_up), up_.data()}}, x.data(), n);
  pool_->parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    cpu::add_bias_rows(up_.data() + begin * s.n_ff, static_cast<const float*>(w.b_up.data), end - begin, s.n_ff);
    cpu::gelu_erf(up_.data() + begin * s.n_ff, (end - begin) * s.n_ff);
  });
  matmul({{as_matrix(w.w_down), proj_.data()}}, up_.data(), n);
  add_and_norm(x.data(), proj_.data(), w.b_down, w.ffn_norm, w.ffn_norm_b, n);
}

void EncoderForward::forward(const EncoderBatch& batch, std::vector<float>& hidden) {
  const EncoderSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  embed(batch, hidden);
  if (n == 0) return;
  for (std::vector<float>* buf : {&q_, &k_, &v_, &attn_, &proj_}) buf->resize(size_t(n * s.n_embd));
  up_.resize(size_t(n * s.n_ff));
  for (const EncoderLayerWeights& w : model_.weights.layers) layer(w, batch, hidden);
}

}  // namespace ridge
