// The attention block of every architecture but MLA: RMSNorm fused into the Q/K/V matmul, biases,
// QK-norm, RoPE at the layer's base, K/V written into the paged store, tiled attention over each
// sequence's history (its sliding window when the layer has one), output projection, residual.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "model/forward.h"
#include "model/shard.h"

namespace ridge {
namespace {

cpu::MatmulJob job(const WeightRef& w, float* y) { return {as_matrix(w), y}; }
const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }

void add_bias(float* x, const WeightRef& bias, int64_t n_tokens) {
  if (!bias.present()) return;
  const float* b = as_f32(bias);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t i = 0; i < bias.cols; ++i) x[t * bias.cols + i] += b[i];
}

}  // namespace

void ModelForward::qk_norm(const LayerWeights& w, int64_t n) {
  const ModelSpec& s = spec_;
  if (s.qk_norm == QkNorm::None) return;
  if (s.qk_norm == QkNorm::Whole && split_attention()) return whole_qk_norm_split(w, n);
  const bool whole = s.qk_norm == QkNorm::Whole;
  ref::rms_norm(q_.data(), as_f32(w.q_norm), whole ? n : n * s.n_head, whole ? s.q_dim() : s.head_dim, s.rms_eps,
                q_.data());
  ref::rms_norm(k_.data(), as_f32(w.k_norm), whole ? n : n * s.n_head_kv, whole ? s.kv_dim() : s.head_dim, s.rms_eps,
                k_.data());
}

// A norm over all heads (OLMoE) with the heads split across ranks: every rank gathers all heads'
// Q and K, normalises them as one process does, and keeps its own.
void ModelForward::whole_qk_norm_split(const LayerWeights& w, int64_t n) {
  const ModelShard& shard = *model_.shard;
  Partition kv_cols;
  for (const Slice& h : shard.kv_heads.parts) kv_cols.parts.push_back({h.begin * spec_.head_dim, h.count * spec_.head_dim});
  auto norm = [&](std::vector<float>& local, const Partition& cols, const WeightRef& weight) {
    gather_columns(local.data(), n, cols, gathered_);
    const int64_t width = cols.total();
    const Slice mine = shard.mine(cols);
    ref::rms_norm(gathered_.data(), as_f32(weight), n, width, spec_.rms_eps, gathered_.data());
    for (int64_t t = 0; t < n; ++t)
      std::copy_n(gathered_.data() + t * width + mine.begin, mine.count, local.data() + t * mine.count);
  };
  norm(q_, shard.q_cols, w.q_norm);
  norm(k_, kv_cols, w.k_norm);
}

void ModelForward::attention(const LayerWeights& w, int64_t l) {
  const ModelSpec& s = spec_;
  const TokenBatch& batch = *batch_;
  KvStore& store = *store_;
  const auto n = int64_t(batch.tokens.size());
  if (n == 0) return;  // a data-parallel rank without sequences this step
  q_.resize(size_t(n * s.q_dim()));
  k_.resize(size_t(n * s.kv_dim()));
  v_.resize(size_t(n * s.kv_dim()));
  attn_.resize(q_.size());
  proj_.resize(x_.size());

  // RMSNorm fused into the matmul's activation pass (kernels/cpu/matmul.h).
  const cpu::MatmulPrologue attn_norm{cpu::MatmulPrologue::Kind::RmsNorm, as_f32(w.attn_norm), s.rms_eps, nullptr};
  matmul({job(w.wq, q_.data()), job(w.wk, k_.data()), job(w.wv, v_.data())}, x_.data(), n, attn_norm);
  layer_ = l;
  if (!lora_groups_.empty()) {
    add_lora(lora::Target::kQ, x_.data(), s.n_embd, attn_norm, q_.data(), s.q_dim());
    add_lora(lora::Target::kK, x_.data(), s.n_embd, attn_norm, k_.data(), s.kv_dim());
    add_lora(lora::Target::kV, x_.data(), s.n_embd, attn_norm, v_.data(), s.kv_dim());
  }
  add_bias(q_.data(), w.bq, n);
  add_bias(k_.data(), w.bk, n);
  add_bias(v_.data(), w.bv, n);
  qk_norm(w, n);

  const float theta_scale = std::pow(s.layer_rope_theta(l), -2.0f / float(s.rope_dim));
  ref::RopeArgs rope{s.n_head, s.head_dim, s.rope_dim, s.rope_style == RopeStyle::NeoX, theta_scale,
                     rope_freq_factors_.empty() ? nullptr : rope_freq_factors_.data()};
  if (s.rope_scaling.type == RopeScaling::Type::Linear) rope.position_scale = 1.0f / s.rope_scaling.factor;
  ref::rope(rope, positions_.data(), n, q_.data());
  rope.n_heads = s.n_head_kv;
  ref::rope(rope, positions_.data(), n, k_.data());

  // Write the batch's K/V into its sequences' blocks, then attend over history + batch.
  auto blocks_of = [&](int64_t t) { return batch.runs[size_t(run_of_[size_t(t)])].blocks; };
  pool_->parallel_for(n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) write_kv(store, l, t, k_.data() + t * s.kv_dim(), v_.data() + t * s.kv_dim());
  });
  if (batch.on_layer_kv) (*batch.on_layer_kv)(l);
  const int64_t window = s.layer_window(l);
  first_position_.resize(size_t(n));
  for (int64_t t = 0; t < n; ++t)
    first_position_[size_t(t)] = window > 0 ? std::max<int32_t>(0, positions_[size_t(t)] - int32_t(window) + 1) : 0;
  begin_local_positions(n);  // Helix: this rank's own positions
  const ref::AttentionArgs args{s.n_head, s.n_head_kv, s.head_dim, s.scores_scale(), window};
  const KvLayerView kv = store.layer(l);
  const int64_t group = s.gqa_group(), dim = s.head_dim;
  if (kv_parallel()) reserve_kv_partials(n, s.n_head_kv, cpu::attention_partial_floats(args, group));
  auto query = [&](int64_t t, int64_t kv_head) {
    return cpu::AttentionQuery{q_.data() + (t * s.n_head + kv_head * group) * dim, kv_head * group, group,
                               positions_[size_t(t)], first_position_[size_t(t)]};
  };
  attend({s.n_head_kv, cpu::attention_partial_floats(args, group), cpu::attention_scratch_floats(args, group),
          [&](int64_t t, int64_t kv_head, int64_t tile, float* scratch, float* partial) {
            cpu::attention_tile(args, query(t, kv_head), tile, kv, blocks_of(t), scratch, partial);
          },
          [&](int64_t t, int64_t kv_head, const float* partials, int64_t n_tiles) {
            if (kv_parallel()) return cpu::attention_merge_partial(args, group, partials, n_tiles, kv_partial(t, kv_head));
            cpu::attention_merge(args, group, partials, n_tiles, attn_.data() + (t * s.n_head + kv_head * group) * dim);
          },
          [&](int64_t t, int64_t count, int64_t kv_head, int64_t tile, float* scratch, float* partials, int64_t stride) {
            const cpu::AttentionQueries queries{q_.data() + (t * s.n_head + kv_head * group) * dim,
                                                s.n_head * dim,
                                                kv_head * group,
                                                group,
                                                positions_.data() + t,
                                                first_position_.data() + t,
                                                count};
            cpu::attention_tile_queries(args, queries, tile, kv, blocks_of(t), scratch, partials, stride);
          },
          cpu::attention_scratch_floats(args, group, cpu::kAttentionQueryBlock)},
         n);
  if (kv_parallel()) {
    merge_kv_parallel(n, [&](int64_t t, int64_t kv_head, const float* partials) {
      cpu::attention_merge(args, group, partials, kvp_.size, attn_.data() + (t * s.n_head + kv_head * group) * dim);
    });
  }
  end_local_positions();

  if (gather_mode() && split_attention()) {
    gather_columns(attn_.data(), n, model_.shard->q_cols, gathered_);  // every head, as one process has them
    output_rows(w.wo, gathered_.data(), n, proj_.data());
  } else {
    matmul({job(w.wo, proj_.data())}, attn_.data(), n);
    if (!lora_groups_.empty()) add_lora(lora::Target::kO, attn_.data(), s.q_dim(), {}, proj_.data(), s.n_embd);
  }
  add_residual(proj_.data(), w.post_attn_norm, n, reduce_attention());
}

}  // namespace ridge
