#include "model/shard.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace ridge {
namespace {

// Part `i` of `parts` of [0, total), cut only at multiples of `granularity` (the end excepted).
Slice split_slice(int64_t total, int64_t granularity, int parts, int i) {
  const int64_t units = (total + granularity - 1) / granularity;
  const int64_t base = units / parts, extra = units % parts;
  const int64_t ub = i * base + std::min<int64_t>(i, extra);
  const int64_t ue = ub + base + (i < extra ? 1 : 0);
  const int64_t b = std::min(total, ub * granularity), e = std::min(total, ue * granularity);
  return {b, e - b};
}

int64_t block_of(const WeightRef& w) { return w.present() ? dtype_info(w.type).block_size : 1; }

// The coarsest block among the matrices whose columns (inputs) a slice cuts.
template <typename F>
int64_t column_granularity(const ModelWeights& weights, F&& matrices) {
  int64_t g = 32;  // the activation block of the CPU kernels: slices keep their packed layout
  for (const LayerWeights& l : weights.layers)
    for (const WeightRef* w : matrices(l)) g = std::max(g, block_of(*w));
  return g;
}

int64_t layer_bytes(const LayerWeights& layer) {
  int64_t bytes = 0;
  for_each_layer_matrix(const_cast<LayerWeights&>(layer), [&](const WeightRef& w) {
    if (w.present()) bytes += w.rows * w.row_bytes();
  });
  return bytes;
}

}  // namespace

Slice vocab_slice(int64_t n_vocab, int ranks, int rank) { return split_slice(n_vocab, 16, ranks, rank); }

ModelSpec ModelShard::local_spec(const ModelSpec& full) const {
  ModelSpec s = full;
  if (attention_split && !full.is_mla()) {
    s.n_head_kv = kv_heads.count;
    s.n_head = kv_heads.count * full.gqa_group();
  }
  s.n_ff = ff.count;
  if (full.is_moe()) {
    s.n_ff_expert = ff_expert.count;
    if (full.shared_ff() > 0) s.n_ff_shared = shared_ff.count;
  }
  return s;
}

std::vector<int64_t> stage_bounds(const ModelSpec& spec, const ModelWeights& weights, int n_stages) {
  if (n_stages < 1 || n_stages > spec.n_layer)
    fail("{} pipeline stages cannot split {} layers (one layer per stage at least)", n_stages, spec.n_layer);
  std::vector<double> cost(size_t(spec.n_layer));
  double total = 0;
  for (int64_t l = 0; l < spec.n_layer; ++l) total += cost[size_t(l)] = double(std::max<int64_t>(1, layer_bytes(weights.layers[size_t(l)])));
  const double head = weights.output.present() ? double(weights.output.rows * weights.output.row_bytes()) : 0.0;
  total += head;
  std::vector<int64_t> bounds{0};
  double done = 0;
  int64_t l = 0;
  for (int s = 1; s < n_stages; ++s) {
    const double target = total * s / n_stages;
    // Take layers while that brings the stage closer to its share, leaving one for each stage after.
    while (l < spec.n_layer - (n_stages - s) &&
           (l < bounds.back() + 1 || std::abs(done + cost[size_t(l)] - target) <= std::abs(done - target)))
      done += cost[size_t(l++)];
    bounds.push_back(l);
  }
  bounds.push_back(spec.n_layer);
  return bounds;
}

ModelShard plan_shard(const ModelSpec& spec, const ModelWeights& weights, const ShardRequest& r) {
  if (r.tp_size < 1 || r.tp_rank < 0 || r.tp_rank >= r.tp_size) fail("tensor-parallel rank {} of {}", r.tp_rank, r.tp_size);
  ModelShard shard;
  shard.request = r;
  const std::vector<int64_t> bounds = stage_bounds(spec, weights, r.n_stages);
  shard.layers = {bounds[size_t(r.stage)], bounds[size_t(r.stage) + 1] - bounds[size_t(r.stage)]};
  const int T = r.tp_size;
  shard.vocab = vocab_slice(spec.n_vocab, T, r.tp_rank);
  shard.attention_split = !spec.is_mla();
  if (spec.is_mla()) {
    shard.kv_heads = {0, spec.n_head_kv};
  } else {
    if (T > 1 && spec.qk_norm == QkNorm::Whole)
      fail("{} normalises Q and K over all heads at once, which a tensor-parallel split cannot do", spec.arch);
    if (spec.n_head_kv < T) fail("{} KV heads cannot be split across {} tensor-parallel ranks", spec.n_head_kv, T);
    shard.kv_heads = split_slice(spec.n_head_kv, 1, T, r.tp_rank);
    const int64_t per_kv_head = spec.gqa_group() * spec.head_dim;
    const int64_t g = column_granularity(weights, [](const LayerWeights& l) { return std::vector{&l.wo}; });
    if (T > 1 && (shard.kv_heads.begin * per_kv_head) % g != 0)
      fail("the attention output's columns of tensor-parallel rank {} start at {}, off the weights' blocks of {}",
           r.tp_rank, shard.kv_heads.begin * per_kv_head, g);
  }
  const int64_t g_ff = column_granularity(weights, [](const LayerWeights& l) { return std::vector{&l.w_down}; });
  shard.ff = split_slice(spec.n_ff, g_ff, T, r.tp_rank);
  shard.experts = {0, spec.n_expert};
  if (spec.is_moe()) {
    if (r.expert_parallel) {
      if (spec.n_expert < T) fail("{} experts cannot be spread over {} ranks", spec.n_expert, T);
      shard.experts = split_slice(spec.n_expert, 1, T, r.tp_rank);
      shard.ff_expert = {0, spec.n_ff_expert};
    } else {
      const int64_t g = column_granularity(weights, [](const LayerWeights& l) {
        std::vector<const WeightRef*> m;
        for (const ExpertWeights& e : l.experts) m.push_back(&e.w_down);
        return m;
      });
      shard.ff_expert = split_slice(spec.n_ff_expert, g, T, r.tp_rank);
      if (shard.ff_expert.count == 0) fail("experts of width {} are too narrow for {} ranks", spec.n_ff_expert, T);
    }
    if (spec.shared_ff() > 0) {
      const int64_t g = column_granularity(weights, [](const LayerWeights& l) { return std::vector{&l.shared_down}; });
      shard.shared_ff = split_slice(spec.shared_ff(), g, T, r.tp_rank);
    }
  }
  bool dense_layers = false;
  for (int64_t l = 0; l < spec.n_layer; ++l) dense_layers |= !spec.is_moe_layer(l);
  if (dense_layers && shard.ff.count == 0) fail("an FFN of width {} is too narrow for {} ranks", spec.n_ff, T);
  return shard;
}

std::unique_ptr<HugePageBuffer> shard_weights(ModelWeights& weights, const ModelSpec& spec, const ModelShard& shard) {
  struct Copy {
    WeightRef* ref;
    WeightRef from;
    Slice rows, cols;
    int64_t offset = 0;
  };
  std::vector<Copy> copies;
  auto whole = [&](WeightRef& w) {
    if (w.present()) copies.push_back({&w, w, {0, w.rows}, {0, w.cols}});
  };
  auto rows = [&](WeightRef& w, Slice r) {
    if (w.present()) copies.push_back({&w, w, r, {0, w.cols}});
  };
  auto cols = [&](WeightRef& w, Slice c) {
    if (!w.present()) return;
    if (c.begin % dtype_info(w.type).block_size != 0) fail("a slice at column {} is off the weight's blocks", c.begin);
    copies.push_back({&w, w, {0, w.rows}, c});
  };
  const bool split_attention = shard.attention_split && shard.split();
  const Slice q{shard.kv_heads.begin * spec.gqa_group() * spec.head_dim, shard.kv_heads.count * spec.gqa_group() * spec.head_dim};
  const Slice kv{shard.kv_heads.begin * spec.head_dim, shard.kv_heads.count * spec.head_dim};

  if (shard.first_stage()) whole(weights.token_embd);
  else weights.token_embd = {};
  if (shard.last_stage()) {
    whole(weights.output_norm);
    rows(weights.output, shard.vocab);
  } else {
    weights.output_norm = weights.output = {};
  }
  whole(weights.rope_freqs);
  for (int64_t l = 0; l < spec.n_layer; ++l) {
    LayerWeights& w = weights.layers[size_t(l)];
    if (!shard.holds_layer(l)) {
      w = LayerWeights{};
      continue;
    }
    for (WeightRef* v : {&w.attn_norm, &w.q_norm, &w.k_norm, &w.post_attn_norm, &w.ffn_norm, &w.post_ffn_norm,
                         &w.router, &w.router_bias, &w.shared_router, &w.wq_a, &w.q_a_norm, &w.wq_b, &w.wkv_a,
                         &w.kv_a_norm})
      whole(*v);
    for (std::vector<WeightRef>* heads : {&w.wk_b, &w.wv_b})
      for (WeightRef& h : *heads) whole(h);
    if (split_attention) {
      rows(w.wq, q);
      rows(w.wk, kv);
      rows(w.wv, kv);
      cols(w.bq, q);
      cols(w.bk, kv);
      cols(w.bv, kv);
      cols(w.wo, q);
    } else {
      for (WeightRef* m : {&w.wq, &w.wk, &w.wv, &w.bq, &w.bk, &w.bv, &w.wo}) whole(*m);
    }
    rows(w.w_gate, shard.ff);
    rows(w.w_up, shard.ff);
    cols(w.w_down, shard.ff);
    for (int64_t e = 0; e < int64_t(w.experts.size()); ++e) {
      ExpertWeights& x = w.experts[size_t(e)];
      if (e < shard.experts.begin || e >= shard.experts.end()) {
        x = ExpertWeights{};
        continue;
      }
      rows(x.w_gate, shard.ff_expert);
      rows(x.w_up, shard.ff_expert);
      cols(x.w_down, shard.ff_expert);
    }
    rows(w.shared_gate, shard.shared_ff);
    rows(w.shared_up, shard.shared_ff);
    cols(w.shared_down, shard.shared_ff);
  }

  int64_t total = 0;
  for (Copy& c : copies) {
    c.offset = total;
    total += (c.rows.count * dtype_row_bytes(c.from.type, c.cols.count) + 63) / 64 * 64;
  }
  auto buffer = std::make_unique<HugePageBuffer>(size_t(std::max<int64_t>(total, 64)));
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < copies.size(); ++i) {
    const Copy& c = copies[i];
    const int64_t src_row = c.from.row_bytes(), dst_row = dtype_row_bytes(c.from.type, c.cols.count);
    const int64_t skip = dtype_row_bytes(c.from.type, c.cols.begin);
    const auto* src = static_cast<const uint8_t*>(c.from.data) + c.rows.begin * src_row + skip;
    uint8_t* dst = buffer->data() + c.offset;
    for (int64_t r = 0; r < c.rows.count; ++r) std::memcpy(dst + r * dst_row, src + r * src_row, size_t(dst_row));
  }
  for (const Copy& c : copies) *c.ref = WeightRef{c.from.type, buffer->data() + c.offset, c.rows.count, c.cols.count};
  return buffer;
}

}  // namespace ridge
