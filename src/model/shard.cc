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

Partition partition(int64_t total, int64_t granularity, int parts) {
  Partition p;
  for (int r = 0; r < parts; ++r) p.parts.push_back(split_slice(total, granularity, parts, r));
  return p;
}

// Every rank holds all of it.
Partition replicated(int64_t total, int parts) { return Partition{std::vector<Slice>(size_t(parts), Slice{0, total})}; }

void require_nonempty(const Partition& p, const char* what, int64_t total) {
  for (const Slice& s : p.parts)
    if (s.count == 0) fail("{} of {} is too small to split across {} ranks", what, total, p.parts.size());
}

}  // namespace

ModelSpec ModelShard::local_spec(const ModelSpec& full) const {
  ModelSpec s = full;
  if (attention_split) {
    s.n_head_kv = mine(kv_heads).count;
    s.n_head = mine(q_heads).count;
  }
  s.n_ff = mine(ff).count;
  if (full.is_moe()) {
    s.n_ff_expert = mine(ff_expert).count;
    if (full.shared_ff() > 0) s.n_ff_shared = mine(shared_ff).count;
  }
  return s;
}

std::vector<int64_t> stage_bounds(const ModelSpec& spec, const ModelWeights& weights, int n_stages) {
  if (n_stages < 1 || n_stages > spec.n_layer)
    fail("{} pipeline stages cannot split {} layers (one layer per stage at least)", n_stages, spec.n_layer);
  std::vector<double> cost(size_t(spec.n_layer));
  double total = 0;
  for (int64_t l = 0; l < spec.n_layer; ++l)
    total += cost[size_t(l)] = double(std::max<int64_t>(1, layer_bytes(weights.layers[size_t(l)])));
  if (weights.output.present()) total += double(weights.output.rows * weights.output.row_bytes());
  std::vector<int64_t> bounds{0};
  double done = 0;
  int64_t l = 0;
  for (int s = 1; s < n_stages; ++s) {
    const double target = total * s / n_stages;
    // Take layers while that brings the stage closer to its share (one at least), leaving one for
    // each stage after.
    while (l < spec.n_layer - (n_stages - s) &&
           (l == bounds.back() || std::abs(done + cost[size_t(l)] - target) <= std::abs(done - target)))
      done += cost[size_t(l++)];
    bounds.push_back(l);
  }
  bounds.push_back(spec.n_layer);
  return bounds;
}

ModelShard plan_shard(const ModelSpec& spec, const ModelWeights& weights, const ShardRequest& r) {
  const int T = r.tp_size;
  if (T < 1 || r.tp_rank < 0 || r.tp_rank >= T) fail("tensor-parallel rank {} of {}", r.tp_rank, T);
  if (r.n_stages < 1 || r.stage < 0 || r.stage >= r.n_stages) fail("pipeline stage {} of {}", r.stage, r.n_stages);
  if (r.helix && r.dp_attention) fail("--helix shards each sequence's KV across the group; --enable-dp-attention gives each rank whole sequences: pick one");
  ModelShard shard;
  shard.request = r;
  const std::vector<int64_t> bounds = stage_bounds(spec, weights, r.n_stages);
  shard.layers = {bounds[size_t(r.stage)], bounds[size_t(r.stage) + 1] - bounds[size_t(r.stage)]};
  if (r.dp_attention && T > 1) {
    // Everything replicated but the experts, which the ranks divide whole.
    if (!spec.is_moe() || !r.expert_parallel) fail("data-parallel attention needs a MoE model and --ep equal to --tp");
    if (r.n_stages > 1) fail("data-parallel attention runs without pipeline stages (--pp 1)");
    if (spec.n_expert < T) fail("{} experts cannot be spread over {} ranks", spec.n_expert, T);
    shard.attention_split = false;
    shard.vocab = replicated(spec.n_vocab, T);
    shard.embd = replicated(spec.n_embd, T);
    shard.kv_heads = replicated(spec.n_head_kv, T);
    shard.q_heads = replicated(spec.n_head, T);
    shard.q_cols = replicated(spec.q_dim(), T);
    shard.ff = replicated(spec.n_ff, T);
    shard.ff_expert = replicated(spec.n_ff_expert, T);
    shard.shared_ff = replicated(spec.shared_ff(), T);
    shard.experts = partition(spec.n_expert, 1, T);
    return shard;
  }
  const bool gather = r.tp_mode == TpMode::Gather;
  shard.vocab = partition(spec.n_vocab, 16, T);
  shard.embd = gather ? partition(spec.n_embd, 16, T) : replicated(spec.n_embd, T);
  // Helix: attention whole on every rank (each attends over its own positions), the rest split.
  shard.attention_split = !spec.is_mla() && !r.helix;
  if (!shard.attention_split) {
    shard.kv_heads = replicated(spec.n_head_kv, T);
    shard.q_heads = replicated(spec.n_head, T);
  } else if (spec.n_head_kv >= T) {
    shard.kv_heads = partition(spec.n_head_kv, 1, T);
    for (const Slice& kv : shard.kv_heads.parts)
      shard.q_heads.parts.push_back({kv.begin * spec.gqa_group(), kv.count * spec.gqa_group()});
  } else {
    // Fewer KV heads than ranks (vLLM's rule): each KV head on T / n_head_kv ranks, its query
    // heads divided among them.
    const int64_t copies = T / spec.n_head_kv;
    if (T % spec.n_head_kv != 0 || spec.gqa_group() % copies != 0)
      fail("{} KV heads ({} query heads each) cannot be split or replicated evenly across {} tensor-parallel ranks",
           spec.n_head_kv, spec.gqa_group(), T);
    if (spec.qk_norm == QkNorm::Whole)
      fail("a QK-norm over all heads needs at least as many KV heads as tensor-parallel ranks ({} < {})", spec.n_head_kv, T);
    const int64_t per_rank = spec.gqa_group() / copies;
    for (int r = 0; r < T; ++r) {
      shard.kv_heads.parts.push_back({r / copies, 1});
      shard.q_heads.parts.push_back({r * per_rank, per_rank});
    }
  }
  for (const Slice& h : shard.q_heads.parts) shard.q_cols.parts.push_back({h.begin * spec.head_dim, h.count * spec.head_dim});
  if (!spec.is_mla() && !gather) {
    const int64_t g = column_granularity(weights, [](const LayerWeights& l) { return std::vector{&l.wo}; });
    for (const Slice& q : shard.q_cols.parts)
      if (q.begin % g != 0)
        fail("the attention output's columns {}.. are off the weights' blocks of {}: use --tp-mode gather", q.begin, g);
  }
  // Gather splits rows (any 16-row tile); Reduce splits the down matrices' columns on their blocks.
  auto width = [&](int64_t total, int64_t reduce_granularity) {
    return partition(total, gather ? 16 : reduce_granularity, T);
  };
  shard.ff = width(spec.n_ff, column_granularity(weights, [](const LayerWeights& l) { return std::vector{&l.w_down}; }));
  shard.experts = replicated(spec.n_expert, T);
  shard.ff_expert = replicated(spec.n_ff_expert, T);
  shard.shared_ff = replicated(spec.shared_ff(), T);
  if (spec.is_moe()) {
    if (r.expert_parallel) {
      if (spec.n_expert < T) fail("{} experts cannot be spread over {} ranks", spec.n_expert, T);
      shard.experts = partition(spec.n_expert, 1, T);
    } else {
      shard.ff_expert = width(spec.n_ff_expert, column_granularity(weights, [](const LayerWeights& l) {
        std::vector<const WeightRef*> m;
        for (const ExpertWeights& e : l.experts) m.push_back(&e.w_down);
        return m;
      }));
      require_nonempty(shard.ff_expert, "an expert's width", spec.n_ff_expert);
    }
    if (spec.shared_ff() > 0) {
      shard.shared_ff = width(spec.shared_ff(), column_granularity(weights, [](const LayerWeights& l) {
        return std::vector{&l.shared_down};
      }));
      require_nonempty(shard.shared_ff, "the shared expert's width", spec.shared_ff());
    }
  }
  bool dense_layers = false;
  for (int64_t l = 0; l < spec.n_layer; ++l) dense_layers |= !spec.is_moe_layer(l);
  if (dense_layers) require_nonempty(shard.ff, "an FFN width", spec.n_ff);
  require_nonempty(shard.embd, "the hidden size", spec.n_embd);
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
  const bool gather = shard.gather();  // false under dp_attention: the replicated "slices" are whole
  const Slice q = shard.mine(shard.q_cols);
  const Slice kv{shard.mine(shard.kv_heads).begin * spec.head_dim, shard.mine(shard.kv_heads).count * spec.head_dim};
  const Slice embd = shard.mine(shard.embd), ff = shard.mine(shard.ff), ff_expert = shard.mine(shard.ff_expert);
  const Slice shared = shard.mine(shard.shared_ff);
  // A down matrix: its output rows (Gather) or its input columns (Reduce).
  auto down = [&](WeightRef& w, Slice inputs) {
    if (gather) rows(w, embd);
    else cols(w, inputs);
  };
  // A gated FFN of the given width: gate and up by rows, down as above.
  auto gated = [&](WeightRef& gate, WeightRef& up, WeightRef& d, Slice width) {
    rows(gate, width);
    rows(up, width);
    down(d, width);
  };

  if (shard.first_stage()) whole(weights.token_embd);
  else weights.token_embd = {};
  if (shard.last_stage()) {
    whole(weights.output_norm);
    rows(weights.output, shard.mine(shard.vocab));
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
      down(w.wo, q);
    } else {
      for (WeightRef* m : {&w.wq, &w.wk, &w.wv, &w.bq, &w.bk, &w.bv, &w.wo}) whole(*m);
    }
    gated(w.w_gate, w.w_up, w.w_down, ff);
    for (int64_t e = 0; e < int64_t(w.experts.size()); ++e) {
      ExpertWeights& x = w.experts[size_t(e)];
      if (!shard.holds_expert(e)) {
        x = ExpertWeights{};
        continue;
      }
      if (shard.request.expert_parallel) {
        for (WeightRef* m : {&x.w_gate, &x.w_up, &x.w_down}) whole(*m);
        continue;
      }
      gated(x.w_gate, x.w_up, x.w_down, ff_expert);
    }
    gated(w.shared_gate, w.shared_up, w.shared_down, shared);
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
  for (const Copy& c : copies) {
    *c.ref = WeightRef{c.from.type, buffer->data() + c.offset, c.rows.count, c.cols.count};
    c.ref->scale = c.from.scale;  // a per-tensor factor holds for every slice
  }
  return buffer;
}

}  // namespace ridge
