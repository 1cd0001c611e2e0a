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
#include "model/llama_mirror.h"
#include "model/rope_freqs.h"

namespace ridge {
namespace {

ref::WeightMatrix as_matrix(const WeightRef& w) { return {w.type, w.data, w.rows, w.cols, w.packed}; }
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

LlamaForward::~LlamaForward() = default;

std::optional<Numerics> parse_numerics(std::string_view name) {
  if (name == "native") return Numerics::Native;
  if (name == "ggml") return Numerics::Ggml;
  return std::nullopt;
}

void LlamaForward::set_numerics(Numerics numerics) {
  mirror_ = numerics == Numerics::Ggml ? std::make_unique<LlamaMirrorForward>(model_) : nullptr;
}

void LlamaForward::set_threads(int n_threads) {
  pool_ = std::make_unique<ThreadPool>(n_threads > 0 ? n_threads : omp_get_max_threads());
}

KvCache LlamaForward::make_cache(int64_t n_ctx, KvDtype dtype) const {
  return KvCache(model_.spec.n_layer, n_ctx, model_.spec.n_head_kv, model_.spec.head_dim, dtype);
}

KvLayout LlamaForward::kv_layout(int32_t block_size, int32_t n_blocks, KvDtype dtype) const {
  return {model_.spec.n_layer, model_.spec.n_head_kv, model_.spec.head_dim, block_size, n_blocks, dtype};
}

int64_t logits_rows(const TokenBatch& batch) {
  int64_t rows = 0;
  for (const SequenceRun& run : batch.runs)
    rows += run.logits == LogitsWanted::All ? run.n_tokens : run.logits == LogitsWanted::Last ? 1 : 0;
  return rows;
}

void for_each_logits_rows(const TokenBatch& batch, const std::function<void(int64_t first, int64_t n)>& rows) {
  for (int64_t r = 0, t0 = 0; r < int64_t(batch.runs.size()); t0 += batch.runs[size_t(r)].n_tokens, ++r) {
    const SequenceRun& run = batch.runs[size_t(r)];
    if (run.logits == LogitsWanted::All) rows(t0, run.n_tokens);
    if (run.logits == LogitsWanted::Last) rows(t0 + run.n_tokens - 1, 1);
  }
}

void embed_batch(const Model& model, const TokenBatch& batch, std::vector<float>& x, std::vector<int32_t>& positions,
                 std::vector<int32_t>& run_of) {
  const ModelSpec& s = model.spec;
  const WeightRef& embd = model.weights.token_embd;
  const auto n = int64_t(batch.tokens.size());
  x.resize(size_t(n * s.n_embd));
  positions.resize(size_t(n));
  run_of.resize(size_t(n));
  for (int64_t r = 0, t = 0; r < int64_t(batch.runs.size()); ++r) {
    const SequenceRun& run = batch.runs[size_t(r)];
    for (int64_t i = 0; i < run.n_tokens; ++i, ++t) {
      const int32_t id = batch.tokens[size_t(t)];
      if (id < 0 || id >= s.n_vocab) fail("token id {} is outside the vocabulary of {}", id, s.n_vocab);
      float* row = x.data() + t * s.n_embd;
      if (embd.packed) {
        cpu::dequantize_packed_row(embd.type, embd.data, embd.rows, s.n_embd, id, row);
      } else {
        ref::dequantize_row(embd.type, embd.row(id), row, s.n_embd);
      }
      positions[size_t(t)] = int32_t(run.first_position + i);
      run_of[size_t(t)] = int32_t(r);
    }
  }
}

void LlamaForward::forward(std::span<const int32_t> tokens, KvCache& cache, bool all_logits, std::vector<float>& logits) {
  const auto n = int64_t(tokens.size());
  if (cache.size() + n > cache.capacity())
    fail("{} tokens at position {} exceed the context of {} tokens", n, cache.size(), cache.capacity());
  const SequenceRun run{n, cache.size(), cache.block_table(), all_logits ? LogitsWanted::All : LogitsWanted::Last};
  forward(TokenBatch{tokens, std::span(&run, 1)}, cache.store(), logits);
  cache.resize(cache.size() + n);
}

void LlamaForward::check(const TokenBatch& batch, const KvStore& store) const {
  const KvLayout& kv = store.layout();
  if (kv.n_layer != model_.spec.n_layer || kv.n_kv_heads != model_.spec.n_head_kv || kv.head_dim != model_.spec.head_dim)
    fail("the KV store's shape does not match the model");
  int64_t n = 0;
  for (const SequenceRun& run : batch.runs) {
    if (run.n_tokens <= 0 || run.first_position < 0) fail("a sequence run needs tokens and a position >= 0");
    const int64_t end = run.first_position + run.n_tokens;
    if (int64_t(run.blocks.size()) * kv.block_size < end)
      fail("{} KV blocks of {} tokens cannot hold position {}", run.blocks.size(), kv.block_size, end - 1);
    for (int64_t b = 0; b < (end + kv.block_size - 1) / kv.block_size; ++b)
      if (run.blocks[size_t(b)] < 0 || run.blocks[size_t(b)] >= kv.n_blocks)
        fail("KV block {} is outside the pool of {}", run.blocks[size_t(b)], kv.n_blocks);
    n += run.n_tokens;
  }
  if (n == 0) fail("forward needs at least one token");
  if (n != int64_t(batch.tokens.size())) fail("the batch has {} tokens but its runs cover {}", batch.tokens.size(), n);
}

void LlamaForward::forward(const TokenBatch& batch, KvStore& store, std::vector<float>& logits) {
  const ModelSpec& s = model_.spec;
  const auto& w = model_.weights;
  check(batch, store);
  if (mirror_) {
    mirror_->forward(batch, store, logits, *pool_);
    return;
  }
  const auto n = int64_t(batch.tokens.size());

  embed_batch(model_, batch, x_, positions_, run_of_);
  xn_.resize(x_.size());

  for (int64_t l = 0; l < s.n_layer; ++l) {
    const LayerWeights& layer = w.layers[size_t(l)];
    attention_block(layer, l, batch, store);
    ffn_block(layer, n);
  }

  // Only the rows whose logits are wanted go through the final norm and the vocabulary projection.
  const int64_t n_out = logits_rows(batch);
  logits.resize(size_t(n_out * s.n_vocab));
  if (n_out == 0) return;
  int64_t out = 0;
  for_each_logits_rows(batch, [&](int64_t first, int64_t rows) {
    ref::rms_norm(x_.data() + first * s.n_embd, as_f32(w.output_norm), rows, s.n_embd, s.rms_eps,
                  xn_.data() + out * s.n_embd);
    out += rows;
  });
  matmul({job(w.output, logits.data())}, xn_.data(), n_out);
}

void LlamaForward::matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens,
                          const cpu::MatmulPrologue& prologue) {
  cpu::matmul(std::span(jobs.begin(), jobs.size()), x, n_tokens, *pool_, matmul_scratch_, cpu::active_isa(), prologue);
}

namespace {
cpu::MatmulPrologue rms_norm_of(const WeightRef& weight, float eps) {
  return {cpu::MatmulPrologue::Kind::RmsNorm, as_f32(weight), eps, nullptr};
}
}  // namespace

void LlamaForward::attention_block(const LayerWeights& layer, int64_t l, const TokenBatch& batch, KvStore& store) {
  const ModelSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  q_.resize(size_t(n * s.q_dim()));
  k_.resize(size_t(n * s.kv_dim()));
  v_.resize(size_t(n * s.kv_dim()));
  attn_.resize(q_.size());
  proj_.resize(x_.size());

  // RMSNorm fused into the matmul's activation pass (kernels/cpu/matmul.h).
  matmul({job(layer.wq, q_.data()), job(layer.wk, k_.data()), job(layer.wv, v_.data())}, x_.data(), n,
         rms_norm_of(layer.attn_norm, s.rms_eps));
  add_bias(q_.data(), layer.bq, n);
  add_bias(k_.data(), layer.bk, n);
  add_bias(v_.data(), layer.bv, n);

  ref::RopeArgs rope{s.n_head, s.head_dim, s.rope_dim, s.rope_style == RopeStyle::NeoX, rope_theta_scale_,
                     rope_freq_factors_.empty() ? nullptr : rope_freq_factors_.data()};
  if (s.rope_scaling.type == RopeScaling::Type::Linear) rope.position_scale = 1.0f / s.rope_scaling.factor;
  ref::rope(rope, positions_.data(), n, q_.data());
  rope.n_heads = s.n_head_kv;
  ref::rope(rope, positions_.data(), n, k_.data());

  // Write the batch's K/V into its sequences' blocks, then attend over history + batch.
  const int32_t block_size = store.layout().block_size;
  auto blocks_of = [&](int64_t t) { return batch.runs[size_t(run_of_[size_t(t)])].blocks; };
  pool_->parallel_for(n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int32_t p = positions_[size_t(t)];
      store.write(l, blocks_of(t)[size_t(p / block_size)], p % block_size, k_.data() + t * s.kv_dim(),
                  v_.data() + t * s.kv_dim());
    }
  });
  const KvLayerView kv = store.layer(l);
  const ref::AttentionArgs args{s.n_head, s.n_head_kv, s.head_dim, 1.0f / std::sqrt(float(s.head_dim))};
  attend(args, kv, n, blocks_of);

  matmul({job(layer.wo, proj_.data())}, attn_.data(), n);
  add_into(x_.data(), proj_.data(), n * s.n_embd);
}

// Attention of every (token, KV group) over its history, tile by tile (kernels/cpu/attention.h).
// Many tokens (prefill): each (token, KV group) is one part, its tiles computed in order into the
// thread's partials and merged. Few tokens over long histories (decode): the tiles themselves are
// the parts (flash-decoding), then a second pass merges each (token, KV group). Same bits either way.
void LlamaForward::attend(const ref::AttentionArgs& args, const KvLayerView& kv, int64_t n,
                          const std::function<std::span<const BlockId>(int64_t)>& blocks_of) {
  const int64_t group = args.n_heads / args.n_kv_heads, dim = args.head_dim;
  const int64_t part = cpu::attention_partial_floats(args, group);
  const int64_t n_threads = pool_->size(), n_pairs = n * args.n_kv_heads;
  const int32_t max_position = *std::max_element(positions_.begin(), positions_.end());
  const int64_t max_tiles = cpu::attention_tiles(max_position);
  scores_.resize(size_t(n_threads * group * cpu::kAttentionTile));
  auto query = [&](int64_t t, int64_t kv_head) {
    return cpu::AttentionQuery{q_.data() + (t * args.n_heads + kv_head * group) * dim, kv_head * group, group,
                               positions_[size_t(t)]};
  };
  auto out_of = [&](int64_t t, int64_t kv_head) { return attn_.data() + (t * args.n_heads + kv_head * group) * dim; };

  if (max_tiles == 1 || n_pairs >= 2 * n_threads) {
    partials_.resize(size_t(n_threads * max_tiles * part));
    pool_->run([&](int thread, int n_parts) {
      float* scores = scores_.data() + thread * group * cpu::kAttentionTile;
      float* partials = partials_.data() + thread * max_tiles * part;
      const Range pairs = split_range(n_pairs, 1, thread, n_parts);
      for (int64_t i = pairs.begin; i < pairs.end; ++i) {
        const int64_t t = i / args.n_kv_heads, kv_head = i % args.n_kv_heads;
        const cpu::AttentionQuery q = query(t, kv_head);
        const int64_t n_tiles = cpu::attention_tiles(q.position);
        for (int64_t c = 0; c < n_tiles; ++c) cpu::attention_tile(args, q, c, kv, blocks_of(t), scores, partials + c * part);
        cpu::attention_merge(args, group, partials, n_tiles, out_of(t, kv_head));
      }
    });
    return;
  }
  tile_base_.resize(size_t(n + 1));
  tile_base_[0] = 0;
  for (int64_t t = 0; t < n; ++t)
    tile_base_[size_t(t + 1)] = tile_base_[size_t(t)] + args.n_kv_heads * cpu::attention_tiles(positions_[size_t(t)]);
  const int64_t n_items = tile_base_[size_t(n)];
  partials_.resize(size_t(n_items * part));
  pool_->run([&](int thread, int n_parts) {
    float* scores = scores_.data() + thread * group * cpu::kAttentionTile;
    const Range items = split_range(n_items, 1, thread, n_parts);
    int64_t t = 0;
    for (int64_t i = items.begin; i < items.end; ++i) {
      while (tile_base_[size_t(t + 1)] <= i) ++t;
      const int64_t n_tiles = cpu::attention_tiles(positions_[size_t(t)]);
      const int64_t within = i - tile_base_[size_t(t)], kv_head = within / n_tiles, c = within % n_tiles;
      cpu::attention_tile(args, query(t, kv_head), c, kv, blocks_of(t), scores, partials_.data() + i * part);
    }
  });
  pool_->run([&](int thread, int n_parts) {
    const Range pairs = split_range(n_pairs, 1, thread, n_parts);
    for (int64_t i = pairs.begin; i < pairs.end; ++i) {
      const int64_t t = i / args.n_kv_heads, kv_head = i % args.n_kv_heads;
      const int64_t n_tiles = cpu::attention_tiles(positions_[size_t(t)]);
      const float* first = partials_.data() + (tile_base_[size_t(t)] + kv_head * n_tiles) * part;
      cpu::attention_merge(args, group, first, n_tiles, out_of(t, kv_head));
    }
  });
}

void LlamaForward::ffn_block(const LayerWeights& layer, int64_t n) {
  const ModelSpec& s = model_.spec;
  gate_.resize(size_t(n * s.n_ff));
  up_.resize(gate_.size());

  // RMSNorm and SwiGLU fused into the activation passes of the matmuls that read them.
  matmul({job(layer.w_gate, gate_.data()), job(layer.w_up, up_.data())}, x_.data(), n,
         rms_norm_of(layer.ffn_norm, s.rms_eps));
  matmul({job(layer.w_down, proj_.data())}, gate_.data(), n, {cpu::MatmulPrologue::Kind::SwiGlu, nullptr, 0.0f, up_.data()});
  add_into(x_.data(), proj_.data(), n * s.n_embd);
}

}  // namespace ridge
