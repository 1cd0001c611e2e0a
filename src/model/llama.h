#pragma once
// The Llama-family forward pass (llama, mistral, qwen2): a plain loop over layers calling named kernels.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/matmul.h"
#include "kv/kv_cache.h"
#include "model/weights.h"

namespace ridge {

class LlamaForward {
 public:
  // n_threads <= 0: the OpenMP default (OMP_NUM_THREADS, else one per core).
  explicit LlamaForward(const Model& model, int n_threads = 0);
  int n_threads() const { return pool_->size(); }
  void set_threads(int n_threads);  // a new pool of n_threads (<= 0: the default as above)

  const ModelSpec& spec() const { return model_.spec; }
  KvCache make_cache(int64_t n_ctx) const;

  // Run `tokens` at positions cache.size() .. cache.size() + n - 1, appending their K/V to `cache`.
  // logits becomes (n_tokens, n_vocab) when all_logits, else (1, n_vocab) for the last token.
  // Error when the tokens do not fit the cache's context or an id is outside the vocabulary.
  void forward(std::span<const int32_t> tokens, KvCache& cache, bool all_logits, std::vector<float>& logits);

 private:
  void attention_block(const LayerWeights& layer, int64_t layer_index, KvCache& cache, int64_t n_tokens);
  void ffn_block(const LayerWeights& layer, int64_t n_tokens);
  void matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens);

  const Model& model_;
  std::unique_ptr<ThreadPool> pool_;
  cpu::MatmulScratch matmul_scratch_;
  std::vector<float> scores_;  // (n_threads, n_ctx) attention scores, one row per thread
  float rope_theta_scale_;
  std::vector<float> rope_freq_factors_;  // (rope_dim / 2) or empty
  // Activations for the current batch of tokens.
  std::vector<float> x_;       // (n_tokens, n_embd) residual stream
  std::vector<float> xn_;      // (n_tokens, n_embd) normalised input of a block
  std::vector<float> q_;       // (n_tokens, q_dim)
  std::vector<float> k_;       // (n_tokens, kv_dim)
  std::vector<float> v_;       // (n_tokens, kv_dim)
  std::vector<float> attn_;    // (n_tokens, q_dim)
  std::vector<float> proj_;    // (n_tokens, n_embd)
  std::vector<float> gate_;    // (n_tokens, n_ff)
  std::vector<float> up_;      // (n_tokens, n_ff)
  std::vector<int32_t> positions_;  // (n_tokens)
};

}  // namespace ridge
