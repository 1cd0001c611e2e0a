#include "model/llama_mirror.h"

#include <cmath>

#include "core/error.h"
#include "model/forward.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge {
namespace {

const float* as_f32(const WeightRef& w) { return static_cast<const float*>(w.data); }

void require_matrix(const WeightRef& w, const char* name) {
  if (w.recoded_from) fail("--numerics ggml needs the file's own types; {} was re-encoded at load (RIDGE_PACK=0 keeps it)", name);
  if (w.type != DType::Q4_1 && w.type != DType::Q8_0)
    fail("--numerics ggml covers Q4_1 and Q8_0 matrices; {} is {}", name, dtype_name(w.type));
}

void require_norm(const WeightRef& w, const char* name) {
  if (w.type != DType::F32) fail("--numerics ggml covers F32 norms; {} is {}", name, dtype_name(w.type));
}

int64_t round_up8(int64_t n) { return (n + 7) / 8 * 8; }

}  // namespace

LlamaMirrorForward::LlamaMirrorForward(const Model& model) : model_(model) {
  const ModelSpec& s = model.spec;
  if (!mirror::supported()) fail("--numerics ggml needs a CPU with AVX2, FMA and F16C");
  if (s.is_moe() || s.is_mla() || s.qkv_bias) fail("--numerics ggml covers dense Llama-family models without biases");
  if (s.rope_style != RopeStyle::Normal || s.rope_scaling.type != RopeScaling::Type::None || model.weights.rope_freqs.present())
    fail("--numerics ggml covers normal RoPE without scaling or frequency factors");
  if (s.head_dim % 32 != 0 || s.rope_dim > 512 || s.n_embd % 32 != 0 || s.n_ff % 32 != 0)
    fail("--numerics ggml needs head_dim, n_embd and n_ff multiples of 32");
  const ModelWeights& w = model.weights;
  require_matrix(w.token_embd, "token_embd");
  require_matrix(w.output, "output");
  require_norm(w.output_norm, "output_norm");
  for (const LayerWeights& layer : w.layers) {
    for (const WeightRef* m : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w_gate, &layer.w_up, &layer.w_down})
      require_matrix(*m, "a layer matrix");
    require_norm(layer.attn_norm, "attn_norm");
    require_norm(layer.ffn_norm, "ffn_norm");
  }
  // One GGUF-layout copy of every packed matrix, made once: decode steps then read rows directly.
  std::vector<const WeightRef*> packed;
  auto note = [&](const WeightRef& m) {
    if (m.packed && !unpacked_.count(m.data)) {
      unpacked_[m.data].resize(size_t(m.rows * m.row_bytes()));
      packed.push_back(&m);
    }
  };
  note(w.output);
  for (const LayerWeights& layer : w.layers)
    for (const WeightRef* m : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w_gate, &layer.w_up, &layer.w_down}) note(*m);
  for (const WeightRef* m : packed) {
    uint8_t* out = unpacked_[m->data].data();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < m->rows; ++r) cpu::unpack_row(m->type, m->data, m->rows, m->cols, r, out + r * m->row_bytes());
  }
}

const uint8_t* LlamaMirrorForward::gguf_rows(const WeightRef& w) const {
  if (!w.packed) return static_cast<const uint8_t*>(w.data);
  return unpacked_.at(w.data).data();
}

// y (n_tokens, rows) = x (n_tokens, cols) through the matrix, activations quantized as the
// reference quantizes them for this weight type, one dot per (row, token).
void LlamaMirrorForward::matmul(const WeightRef& w, const float* x, int64_t n, float* y, ThreadPool& pool) {
  const int64_t nb = w.cols / 32;
  const bool q4_1 = w.type == DType::Q4_1;
  if (q4_1) {
    acts_q8_1_.resize(size_t(n * nb));
  } else {
    acts_q8_0_.resize(size_t(n * nb));
  }
  pool.parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      if (q4_1) {
        mirror::quantize_q8_1(x + t * w.cols, w.cols, acts_q8_1_.data() + t * nb);
      } else {
        mirror::quantize_q8_0(x + t * w.cols, w.cols, acts_q8_0_.data() + t * nb);
      }
    }
  });
  const uint8_t* rows_data = gguf_rows(w);
  const int64_t row_bytes = w.row_bytes();
  pool.run([&](int thread, int n_parts) {
    const Range rows = split_range(w.rows, 16, thread, n_parts);
    for (int64_t r = rows.begin; r < rows.end; ++r) {
      const uint8_t* row = rows_data + r * row_bytes;
      for (int64_t t = 0; t < n; ++t)
        y[t * w.rows + r] = q4_1 ? mirror::dot_q4_1_q8_1(row, acts_q8_1_.data() + t * nb, nb)
                                 : mirror::dot_q8_0_q8_0(row, acts_q8_0_.data() + t * nb, nb);
    }
  });
}

// Every (token, KV head): that head's keys and values for positions 0..p gathered from the paged
// store, then each query head of its group attends over them.
void LlamaMirrorForward::attention(int64_t l, const TokenBatch& batch, KvStore& store, ThreadPool& pool) {
  const ModelSpec& s = model_.spec;
  const auto n = int64_t(batch.tokens.size());
  const int64_t dim = s.head_dim, group = s.n_head / s.n_head_kv;
  const KvLayerView kv = store.layer(l);
  // The reference multiplies f16 matrices with its tiled GEMM for two or more tokens, its vector dot for one.
  const mirror::DotOrder order = n >= 2 ? mirror::DotOrder::Tiled : mirror::DotOrder::Vector;
  const float scale = 1.0f / std::sqrt(float(dim));
  int64_t max_pos = 0;
  for (int32_t p : positions_) max_pos = std::max<int64_t>(max_pos, p + 1);
  const int64_t per_thread = 2 * max_pos * dim + dim + round_up8(max_pos);
  scratch_.resize(std::max(scratch_.size(), size_t(pool.size() * per_thread)));
  pool.run([&](int thread, int n_parts) {
    float* keys_t = scratch_.data() + thread * per_thread;  // (dim, n_pos)
    float* values = keys_t + max_pos * dim;                  // (n_pos, dim)
    float* work = values + max_pos * dim;
    const Range pairs = split_range(n * s.n_head_kv, 1, thread, n_parts);
    for (int64_t i = pairs.begin; i < pairs.end; ++i) {
      const int64_t t = i / s.n_head_kv, kv_head = i % s.n_head_kv;
      const int64_t n_pos = positions_[size_t(t)] + 1;
      const auto blocks = batch.runs[size_t(run_of_[size_t(t)])].blocks;
      for (int64_t first = 0; first < n_pos; first += kv.block_size) {
        const BlockId block = blocks[size_t(first / kv.block_size)];
        const int64_t count = std::min<int64_t>(kv.block_size, n_pos - first);
        const auto* k = reinterpret_cast<const uint16_t*>(kv.key_head(block, kv_head));
        for (int64_t d = 0; d < dim; ++d) mirror::f16_to_f32_row(k + d * kv.block_size, count, keys_t + d * n_pos + first);
        for (int64_t slot = 0; slot < count; ++slot)
          mirror::f16_to_f32_row(reinterpret_cast<const uint16_t*>(kv.value_row(block, slot)) + kv_head * dim, dim,
                                 values + (first + slot) * dim);
      }
      for (int64_t h = kv_head * group; h < (kv_head + 1) * group; ++h) {
        const int64_t at = (t * s.n_head + h) * dim;
        mirror::attend_head(q_.data() + at, keys_t, values, n_pos, dim, scale, order, work, attn_.data() + at);
      }
    }
  });
}

void LlamaMirrorForward::forward(const TokenBatch& batch, KvStore& store, std::vector<float>& logits, ThreadPool& pool) {
  const ModelSpec& s = model_.spec;
  const ModelWeights& w = model_.weights;
  if (store.layout().dtype != KvDtype::F16) fail("--numerics ggml needs an f16 KV cache");
  const auto n = int64_t(batch.tokens.size());
  const int64_t E = s.n_embd;
  xn_.resize(size_t(n * E));
  proj_.resize(xn_.size());
  q_.resize(size_t(n * s.q_dim()));
  attn_.resize(q_.size());
  k_.resize(size_t(n * s.kv_dim()));
  v_.resize(k_.size());
  gate_.resize(size_t(n * s.n_ff));
  up_.resize(gate_.size());
  embed_batch(model_, batch, x_, positions_, run_of_);
  auto per_token = [&](const auto& body) {
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) body(t);
    });
  };
  auto add_into_x = [&] {
    for (int64_t i = 0; i < n * E; ++i) x_[size_t(i)] = proj_[size_t(i)] + x_[size_t(i)];
  };

  for (int64_t l = 0; l < s.n_layer; ++l) {
    const LayerWeights& layer = w.layers[size_t(l)];
    per_token([&](int64_t t) { mirror::rms_norm_mul(&x_[t * E], as_f32(layer.attn_norm), E, s.rms_eps, &xn_[t * E]); });
    matmul(layer.wq, xn_.data(), n, q_.data(), pool);
    matmul(layer.wk, xn_.data(), n, k_.data(), pool);
    matmul(layer.wv, xn_.data(), n, v_.data(), pool);
    per_token([&](int64_t t) {
      const int32_t p = positions_[size_t(t)];
      mirror::rope_normal(&q_[t * s.q_dim()], s.n_head, s.head_dim, s.rope_dim, p, s.rope_theta);
      mirror::rope_normal(&k_[t * s.kv_dim()], s.n_head_kv, s.head_dim, s.rope_dim, p, s.rope_theta);
      const auto blocks = batch.runs[size_t(run_of_[size_t(t)])].blocks;
      const int32_t block_size = store.layout().block_size;
      store.write(l, blocks[size_t(p / block_size)], p % block_size, &k_[t * s.kv_dim()], &v_[t * s.kv_dim()]);
    });
    attention(l, batch, store, pool);
    matmul(layer.wo, attn_.data(), n, proj_.data(), pool);
    add_into_x();

    per_token([&](int64_t t) { mirror::rms_norm_mul(&x_[t * E], as_f32(layer.ffn_norm), E, s.rms_eps, &xn_[t * E]); });
    matmul(layer.w_gate, xn_.data(), n, gate_.data(), pool);
    matmul(layer.w_up, xn_.data(), n, up_.data(), pool);
    for (size_t i = 0; i < gate_.size(); ++i) gate_[i] = mirror::silu(gate_[i]) * up_[i];
    matmul(layer.w_down, gate_.data(), n, proj_.data(), pool);
    add_into_x();
  }

  const int64_t n_out = logits_rows(batch);
  logits.resize(size_t(n_out * s.n_vocab));
  if (n_out == 0) return;
  int64_t out = 0;
  for_each_logits_rows(batch, [&](int64_t first, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i, ++out)
      mirror::rms_norm_mul(&x_[(first + i) * E], as_f32(w.output_norm), E, s.rms_eps, &xn_[out * E]);
  });
  matmul(w.output, xn_.data(), n_out, logits.data(), pool);
}

}  // namespace ridge
