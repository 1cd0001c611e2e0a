// Multi-head latent attention (DeepSeek-V2/V3), absorbed as llama.cpp runs it: the cache keeps,
// per position and layer, only the RMS-normed kv_lora_rank latent c and the RoPE'd shared key
// k_rope. Each head's unrotated query q_nope is taken into the latent space by its attn_k_b
// (q_nope' = W_kbᵀ q_nope), so its score against a position is q_nope'·c + q_rope·k_rope; the
// attended latent Σ p·c is then decompressed by the head's attn_v_b into its value. The heads'
// K and V are never materialised.
#include <algorithm>

#include "kernels/cpu/latent_attention.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "model/forward.h"
#include "model/rope_freqs.h"

namespace ridge {
namespace {

cpu::MatmulJob job(const WeightRef& w, float* y) { return {as_matrix(w), y}; }
const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }

}  // namespace

void ModelForward::head_matmuls(const std::vector<WeightRef>& heads, const float* x, int64_t x_row, int64_t x_head,
                                float* y, int64_t y_row, int64_t y_head, int64_t n) {
  for (size_t h = 0; h < heads.size(); ++h) {
    const WeightRef& w = heads[h];
    head_in_.resize(size_t(n * w.cols));
    head_out_.resize(size_t(n * w.rows));
    for (int64_t t = 0; t < n; ++t) std::copy_n(x + t * x_row + int64_t(h) * x_head, w.cols, head_in_.data() + t * w.cols);
    matmul({job(w, head_out_.data())}, head_in_.data(), n);
    for (int64_t t = 0; t < n; ++t) std::copy_n(head_out_.data() + t * w.rows, w.rows, y + t * y_row + int64_t(h) * y_head);
  }
}

void ModelForward::latent_attention(const LayerWeights& w, int64_t l) {
  const ModelSpec& s = spec_;
  const TokenBatch& batch = *batch_;
  KvStore& store = *store_;
  const auto n = int64_t(batch.tokens.size());
  if (n == 0) return;  // a data-parallel rank without sequences this step
  const int64_t rank = s.kv_lora_rank, rope_dim = s.qk_rope_head_dim, nope = s.qk_nope_head_dim;
  const int64_t width = rank + rope_dim, heads = s.n_head;
  q_.resize(size_t(n * s.q_dim()));
  latent_.resize(size_t(n * width));
  q_latent_.resize(size_t(n * heads * width));
  attn_latent_.resize(size_t(n * heads * rank));
  attn_.resize(size_t(n * heads * s.v_head_dim));
  proj_.resize(x_.size());

  // The query (through its bottleneck when the model has one) and [latent | k_rope], RMSNorm fused.
  const cpu::MatmulPrologue attn_norm{cpu::MatmulPrologue::Kind::RmsNorm, as_f32(w.attn_norm), s.rms_eps, nullptr};
  if (w.wq_a.present()) {
    q_low_.resize(size_t(n * s.q_lora_rank));
    matmul({job(w.wq_a, q_low_.data()), job(w.wkv_a, latent_.data())}, x_.data(), n, attn_norm);
    matmul({job(w.wq_b, q_.data())}, q_low_.data(), n,
           {cpu::MatmulPrologue::Kind::RmsNorm, as_f32(w.q_a_norm), s.rms_eps, nullptr});
  } else {
    matmul({job(w.wq, q_.data()), job(w.wkv_a, latent_.data())}, x_.data(), n, attn_norm);
  }
  for (int64_t t = 0; t < n; ++t) ref::rms_norm(latent_.data() + t * width, as_f32(w.kv_a_norm), 1, rank, s.rms_eps,
                                               latent_.data() + t * width);

  // RoPE on each head's last rope_dim query values and on the shared key (no frequency factors).
  ref::RopeArgs rope{heads, s.head_dim, rope_dim, false, rope_theta_scale(s), nullptr};
  set_deepseek_rope(s, rope);
  ref::rope(rope, positions_.data(), n, q_.data() + nope);
  rope.n_heads = 1;
  rope.head_dim = width;
  ref::rope(rope, positions_.data(), n, latent_.data() + rank);

  // Absorbed queries [W_kbᵀ q_nope | q_rope] per head.
  head_matmuls(w.wk_b, q_.data(), s.q_dim(), s.head_dim, q_latent_.data(), heads * width, width, n);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < heads; ++h)
      std::copy_n(q_.data() + (t * heads + h) * s.head_dim + nope, rope_dim, q_latent_.data() + (t * heads + h) * width + rank);

  auto blocks_of = [&](int64_t t) { return batch.runs[size_t(run_of_[size_t(t)])].blocks; };
  for (int64_t t = 0; t < n; ++t) write_kv(store, l, t, latent_.data() + t * width, nullptr);
  if (batch.on_layer_kv) (*batch.on_layer_kv)(l);
  first_position_.assign(size_t(n), 0);
  begin_local_positions(n);  // Helix: this rank's own positions
  const ref::LatentAttentionArgs args{heads, rank, rope_dim, deepseek_scores_scale(s)};
  if (kv_parallel()) reserve_kv_partials(n, 1, cpu::latent_attention_partial_floats(args));
  const KvLayerView kv = store.layer(l);
  attend({1, cpu::latent_attention_partial_floats(args), cpu::latent_attention_scratch_floats(args),
          [&](int64_t t, int64_t, int64_t tile, float* scratch, float* partial) {
            cpu::latent_attention_tile(args, q_latent_.data() + t * heads * width, positions_[size_t(t)], tile, kv,
                                       blocks_of(t), scratch, partial);
          },
          [&](int64_t t, int64_t, const float* partials, int64_t n_tiles) {
            if (kv_parallel()) return cpu::latent_attention_merge_partial(args, partials, n_tiles, kv_partial(t, 0));
            cpu::latent_attention_merge(args, partials, n_tiles, attn_latent_.data() + t * heads * rank);
          },
          [&](int64_t t, int64_t count, int64_t, int64_t tile, float* scratch, float* partials, int64_t stride) {
            cpu::latent_attention_tile_queries(args, q_latent_.data() + t * heads * width, heads * width,
                                               positions_.data() + t, count, tile, kv, blocks_of(t), scratch, partials,
                                               stride);
          },
          cpu::latent_attention_scratch_floats(args)},
         n);
  if (kv_parallel()) {
    merge_kv_parallel(n, [&](int64_t t, int64_t, const float* partials) {
      cpu::latent_attention_merge(args, partials, kvp_.size, attn_latent_.data() + t * heads * rank);
    });
  }
  end_local_positions();

  // Each head's value from its attended latent, then the output projection.
  head_matmuls(w.wv_b, attn_latent_.data(), heads * rank, rank, attn_.data(), heads * s.v_head_dim, s.v_head_dim, n);
  matmul({job(w.wo, proj_.data())}, attn_.data(), n);
  add_residual(proj_.data(), WeightRef{}, n, /*partial=*/false);  // replicated, never split
}

}  // namespace ridge
