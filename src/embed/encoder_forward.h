#pragma once
// The CPU pass of an encoder (embed/encoder_model.h) over a batch of whole texts packed one after
// another: embeddings (token + position + type, LayerNorm), then each layer's Q/K/V, attention over
// each text alone, output projection, residual and LayerNorm, GELU FFN, residual and LayerNorm.
// No KV cache: every text is all prompt. Every matmul runs as prefill (the AMX tile path where the
// weights' type has one), and a token's result depends only on its own text, never on the others
// packed beside it.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "embed/encoder.h"
#include "embed/encoder_model.h"
#include "kernels/cpu/matmul.h"

namespace ridge {

class EncoderForward final : public Encoder {
 public:
  // n_threads <= 0: one per core.
  EncoderForward(const EncoderModel& model, int n_threads = 0);
  const EncoderSpec& spec() const { return model_.spec; }
  const EncoderShape& shape() const override { return shape_; }
  int n_threads() const override { return pool_->size(); }

  // hidden becomes (batch.tokens.size(), n_embd): the last layer's output of every token. Error on a
  // token id or type outside the model's, or a text longer than its positions.
  void forward(const EncoderBatch& batch, std::vector<float>& hidden) override;
  // Floating-point operations of one pass over the batch (matmuls and attention), for GFLOP/s.
  double flops(const EncoderBatch& batch) const override;

 private:
  void embed(const EncoderBatch& batch, std::vector<float>& x) const;
  void layer(const EncoderLayerWeights& w, const EncoderBatch& batch, std::vector<float>& x);
  void attention(const EncoderBatch& batch);
  void matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens);
  // y (n_tokens, n) += bias, over the pool.
  void add_bias(float* y, const WeightRef& bias, int64_t n_tokens);
  // x = LayerNorm(x + y + y_bias) with the layer's weight and bias, over the pool.
  void add_and_norm(float* x, const float* y, const WeightRef& y_bias, const WeightRef& weight, const WeightRef& bias,
                    int64_t n_tokens);

  const EncoderModel& model_;
  EncoderShape shape_;
  std::unique_ptr<ThreadPool> pool_;
  cpu::MatmulScratch scratch_;
  std::vector<float> q_, k_, v_, attn_, proj_, up_;
  std::vector<std::vector<float>> attention_scratch_;  // per thread
};

}  // namespace ridge
