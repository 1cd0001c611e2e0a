#pragma once
// The CPU pass of a bidirectional Gemma 3 (embed/gemma_model.h) over whole texts packed one after
// another, as transformers' Gemma3TextModel runs it: embeddings times sqrt(n_embd); per layer
// RMSNorm, Q/K/V, QK-norm per head, RoPE (the layer's base), attention over each text alone (the
// sliding layers' window |i - j| < sliding_window), O, post-norm, residual add; RMSNorm, gate/up,
// GELU-tanh gate · up, down, post-norm, residual add; the final RMSNorm. Every matmul runs as
// prefill, and a token's result depends only on its own text, never on the texts beside it.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "embed/encoder.h"
#include "embed/gemma_model.h"
#include "embed/hf_rope.h"
#include "kernels/cpu/matmul.h"

namespace ridge {

class GemmaEncoder final : public Encoder {
 public:
  // n_threads <= 0: one per core.
  GemmaEncoder(const GemmaEncoderModel& model, int n_threads = 0);
  const EncoderShape& shape() const override { return shape_; }
  int n_threads() const override { return pool_->size(); }
  void forward(const EncoderBatch& batch, std::vector<float>& hidden) override;
  double flops(const EncoderBatch& batch) const override;

 private:
  void embed(const EncoderBatch& batch, std::vector<float>& x);
  void layer(const GemmaLayerWeights& w, bool sliding, const EncoderBatch& batch, std::vector<float>& x);
  void qk_norm_rope(const GemmaLayerWeights& w, const HfRope& rope, int64_t n_tokens);
  void attention(const EncoderBatch& batch, bool sliding);
  void matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens, const WeightRef& norm);
  // x += RMSNorm(y) · weight, row by row over the pool.
  void add_normed(float* x, float* y, const WeightRef& weight, int64_t n_tokens);

  const GemmaEncoderModel& model_;
  EncoderShape shape_;
  HfRope rope_global_, rope_local_;
  std::unique_ptr<ThreadPool> pool_;
  cpu::MatmulScratch scratch_;
  std::vector<int32_t> positions_;                     // (n_tokens) each token's place in its text
  std::vector<float> q_, k_, v_, attn_;                // (n_tokens, q_dim | kv_dim)
  std::vector<float> proj_, gate_, up_;                // (n_tokens, n_embd | n_ff)
  std::vector<float> kt_;                              // per text and KV head: (head_dim, kt width) keys transposed
  std::vector<std::vector<float>> attention_scratch_;  // per thread
};

}  // namespace ridge
