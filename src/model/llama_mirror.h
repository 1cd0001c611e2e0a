#pragma once
// The Llama forward pass with llama.cpp's CPU arithmetic (kernels/mirror/ggml_mirror.h), selected
// with --numerics ggml: the same operations as model/forward.h, each rounded as the reference rounds
// it, so logits and greedy continuations can be compared to the reference bit for bit. Covers
// what has been checked against the reference: Llama-family models without biases, with Q4_1 and
// Q8_0 matrices, F32 norms, normal RoPE without scaling, head_dim a multiple of 32, an f16 KV cache.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/mirror/ggml_mirror.h"
#include "kv/kv_store.h"
#include "model/token_batch.h"
#include "model/weights.h"

namespace ridge {

class LlamaMirrorForward {
 public:
  // Error naming what is outside the covered set (or the CPU's missing AVX2).
  explicit LlamaMirrorForward(const Model& model);

  // ModelForward::forward's contract; the batch has been checked against the store.
  void forward(const TokenBatch& batch, KvStore& store, std::vector<float>& logits, ThreadPool& pool);

 private:
  void matmul(const WeightRef& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool);
  const uint8_t* gguf_rows(const WeightRef& w) const;  // w's rows in GGUF block layout
  void attention(int64_t layer, const TokenBatch& batch, KvStore& store, ThreadPool& pool);

  const Model& model_;
  // Matrices the loader repacked for the native kernels, back in GGUF layout (by packed address).
  std::unordered_map<const void*, std::vector<uint8_t>> unpacked_;
  std::vector<int32_t> positions_, run_of_;
  std::vector<float> x_, xn_, q_, k_, v_, attn_, proj_, gate_, up_;
  std::vector<mirror::BlockQ8_0> acts_q8_0_;
  std::vector<mirror::BlockQ8_1> acts_q8_1_;
  std::vector<float> scratch_;  // per thread: one head's K, V and scores
};

}  // namespace ridge
