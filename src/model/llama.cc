#include "model/llama.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

#include "core/error.h"
#include "kernels/ref/activation.h"
#include "kernels/cpu/attention.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "model/rope_freqs.h"

namespace ridge {
namespace {

ref::WeightMatrix as_matrix(const WeightRef& w) { return {w.type, w.data, w.rows, w.cols}; }
cpu::MatmulJob job(const WeightRef& w, float* y) { return {as_matrix(w), y}; }
const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }

void add_bias(float* x, const WeightRef& bias, int64_t n_tokens) {
  if (!bias.present()) return;
  const float* b = as_f32(bias);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t i = 0; i < bias.cols; ++i) x[t * bias.cols + i] += b[i];
}

void add_into(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace

LlamaForward::LlamaForward(const Model& model, int n_threads) : model_(model) {
  set_threads(n_threads);
  const auto& freqs = model.weights.rope_freqs;
  rope_theta_scale_ = rope_theta_scale(model.spec);
  rope_freq_factors_ = rope_freq_factors(model.spec, freqs.present() ? as_f32(freqs) : nullptr);
}

void LlamaForward::set_threads(int n_threads) {
  pool_ = std::make_unique<ThreadPool>(n_threads > 0 ? n_threads : omp_get_max_threads());
}

KvCache LlamaForward::make_cache(int64_t n_ctx) const {
  return KvCache(model_.spec.n_layer, n_ctx, model_.spec.kv_dim());
}

void LlamaForward::forward(std::span<const int32_t> tokens, KvCache& cache, bool all_logits, std::vector<float>& logits) {
  const ModelSpec& s = model_.spec;
  const auto& w = model_.weights;
  const auto n = int64_t(tokens.size());
  if (n == 0) fail("forward needs at least one token");
  const int64_t pos0 = cache.size();
  if (pos0 + n > cache.capacity())
    fail("{} tokens at position {} exceed the context of {} tokens", n, pos0, cache.capacity());

  x_.resize(size_t(n * s.n_embd));
  xn_.resize(x_.size());
  positions_.resize(size_t(n));
  for (int64_t t = 0; t < n; ++t) {
    const int32_t id = tokens[size_t(t)];
    if (id < 0 || id >= s.n_vocab) fail("token id {} is outside the vocabulary of {}", id, s.n_vocab);
    ref::dequantize_row(w.token_embd.type, w.token_embd.row(id), x_.data() + t * s.n_embd, s.n_embd);
    positions_[size_t(t)] = int32_t(pos0 + t);
  }

  for (int64_t l = 0; l < s.n_layer; ++l) {
    const LayerWeights& layer = w.layers[size_t(l)];
    attention_block(layer, l, cache, n);
    ffn_block(layer, n);
  }
  cache.resize(pos0 + n);

  // Only the rows whose logits are wanted go through the final norm and the vocabulary projection.
  const int64_t n_out = all_logits ? n : 1;
  const float* last = x_.data() + (n - n_out) * s.n_embd;
  ref::rms_norm(last, as_f32(w.output_norm), n_out, s.n_embd, s.rms_eps, xn_.data());
  logits.resize(size_t(n_out * s.n_vocab));
  matmul({job(w.output, logits.data())}, xn_.data(), n_out);
}

void LlamaForward::matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens) {
  cpu::matmul(std::span(jobs.begin(), jobs.size()), x, n_tokens, *pool_, matmul_scratch_);
}

void LlamaForward::attention_block(const LayerWeights& layer, int64_t l, KvCache& cache, int64_t n) {
  const ModelSpec& s = model_.spec;
  const int64_t pos0 = cache.size();
  q_.resize(size_t(n * s.q_dim()));
  k_.resize(size_t(n * s.kv_dim()));
  v_.resize(size_t(n * s.kv_dim()));
  attn_.resize(q_.size());
  proj_.resize(x_.size());

  ref::rms_norm(x_.data(), as_f32(layer.attn_norm), n, s.n_embd, s.rms_eps, xn_.data());
  matmul({job(layer.wq, q_.data()), job(layer.wk, k_.data()), job(layer.wv, v_.data())}, xn_.data(), n);
  add_bias(q_.data(), layer.bq, n);
  add_bias(k_.data(), layer.bk, n);
  add_bias(v_.data(), layer.bv, n);

  ref::RopeArgs rope{s.n_head, s.head_dim, s.rope_dim, s.rope_style == RopeStyle::NeoX, rope_theta_scale_,
                     rope_freq_factors_.empty() ? nullptr : rope_freq_factors_.data()};
  if (s.rope_scaling.type == RopeScaling::Type::Linear) rope.position_scale = 1.0f / s.rope_scaling.factor;
  ref::rope(rope, positions_.data(), n, q_.data());
  rope.n_heads = s.n_head_kv;
  ref::rope(rope, positions_.data(), n, k_.data());

  // Append this batch's K/V after the history, then attend over history + batch.
  uint16_t* keys = cache.keys(l);
  uint16_t* values = cache.values(l);
  cpu::store_f16(k_.data(), int64_t(k_.size()), keys + pos0 * s.kv_dim());
  cpu::store_f16(v_.data(), int64_t(v_.size()), values + pos0 * s.kv_dim());
  const ref::AttentionArgs args{s.n_head, s.n_head_kv, s.head_dim, 1.0f / std::sqrt(float(s.head_dim))};
  const int64_t n_kv = pos0 + n;
  scores_.resize(size_t(pool_->size() * n_kv));
  pool_->run([&](int thread, int n_threads) {
    const Range pairs = split_range(n * s.n_head, 1, thread, n_threads);  // (token, head) pairs
    for (int64_t i = pairs.begin; i < pairs.end; ++i) {
      const int64_t t = i / s.n_head, h = i % s.n_head;
      const int64_t offset = (t * s.n_head + h) * s.head_dim;
      cpu::attention_head_f16(args, h, q_.data() + offset, positions_[size_t(t)], keys, values, n_kv,
                              scores_.data() + thread * n_kv, attn_.data() + offset);
    }
  });

  matmul({job(layer.wo, proj_.data())}, attn_.data(), n);
  add_into(x_.data(), proj_.data(), n * s.n_embd);
}

void LlamaForward::ffn_block(const LayerWeights& layer, int64_t n) {
  const ModelSpec& s = model_.spec;
  gate_.resize(size_t(n * s.n_ff));
  up_.resize(gate_.size());

  ref::rms_norm(x_.data(), as_f32(layer.ffn_norm), n, s.n_embd, s.rms_eps, xn_.data());
  matmul({job(layer.w_gate, gate_.data()), job(layer.w_up, up_.data())}, xn_.data(), n);
  ref::swiglu(gate_.data(), up_.data(), n * s.n_ff);
  matmul({job(layer.w_down, proj_.data())}, gate_.data(), n);
  add_into(x_.data(), proj_.data(), n * s.n_embd);
}

}  // namespace ridge
