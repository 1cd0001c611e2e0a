#pragma once
// The Llama-family forward pass on a CUDA GPU: ModelForward's contract (one pass over a ragged batch
// of sequence runs, K/V written into and read from a paged store through block tables, logits of the
// wanted rows) over a DeviceKvStore. Weights are uploaded once. Decode steps (one token per run, up
// to 128 runs) are captured once per batch bucket into a CUDA graph and replayed. Every launch adds
// its bytes and FLOPs to a ledger (backend/kernel_cost.h); optional events time each kernel family.
// No CUDA header is needed to use it.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cuda/device_kv_store.h"
#include "backend/kernel_cost.h"
#include "model/token_batch.h"
#include "model/weights.h"

namespace ridge::cuda {

struct CudaForwardOptions {
  int device = 0;
  int64_t gemv_max_tokens = kGemvMaxTokens;  // tokens per GEMV launch (1..8)
  int64_t gemm_min_tokens = 16;              // from here on: cuBLASLt BF16 on the weights' BF16 copies
  bool gemm_copies = true;                   // keep BF16 copies (off: every batch size uses the GEMV, in chunks)
  bool graphs = true;                        // capture decode steps per batch bucket
  int64_t n_ctx = 0;                         // positions covered (RoPE table, graph split-K); 0: the model's
};

class CudaForward {
 public:
  explicit CudaForward(const Model& model, const CudaForwardOptions& options = {});
  ~CudaForward();
  CudaForward(const CudaForward&) = delete;
  CudaForward& operator=(const CudaForward&) = delete;

  const ModelSpec& spec() const;
  KvLayout kv_layout(int32_t block_size, int32_t n_blocks, KvDtype dtype) const;
  int64_t n_ctx() const;
  Stream stream() const;
  int64_t weight_device_bytes() const;

  // logits becomes (logits_rows(batch), n_vocab), rows in run order. Error when a run's blocks do not
  // cover its positions, a position is past n_ctx, or an id is outside the vocabulary.
  void forward(const TokenBatch& batch, DeviceKvStore& store, std::vector<float>& logits);
  // Greedy decoding on the device: the first maximum of each wanted row; only the ids come back.
  void forward_argmax(const TokenBatch& batch, DeviceKvStore& store, std::vector<int32_t>& tokens);

  // The work of the passes since reset_costs(), per kernel family.
  const CostLedger& costs() const;
  void reset_costs();
  // While on, each kernel is timed with events (and graphs are not used); times in ms per family.
  void set_profiling(bool on);
  const std::array<double, kKernelKinds>& profile_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ridge::cuda
