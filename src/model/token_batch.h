#pragma once
// What one forward pass computes: runs of consecutive positions of several sequences, packed
// together (a prefill chunk and a decode token are both runs). Each run names the blocks of its
// sequence's K/V in the KvStore; the pass writes the run's K/V there and attends through them.
#include <cstdint>
#include <functional>
#include <span>

#include "kv/block_pool.h"

namespace ridge {

namespace lora {
struct LoraAdapter;
}

enum class LogitsWanted { None, Last, All };

struct SequenceRun {
  int64_t n_tokens = 0;
  int64_t first_position = 0;
  std::span<const BlockId> blocks;  // must cover positions 0 .. first_position + n_tokens - 1
  LogitsWanted logits = LogitsWanted::Last;
  // Positions below this are the prompt's: they take the prefill kernels (cpu::MatmulInput::prefill),
  // so a position's result never depends on how the prompt was chunked or batched. 0: none.
  int64_t prompt_end = 0;
  // The run's LoRA adapter (model/lora): its low-rank addends join this run's rows only. null: the base.
  const lora::LoraAdapter* adapter = nullptr;
};

struct TokenBatch {
  std::span<const int32_t> tokens;  // the runs' tokens, run after run
  std::span<const SequenceRun> runs;
  // Called once per layer as soon as the batch's K/V of that layer is in the store, before its
  // attention runs (a disaggregated prefill streams layer l to the decode instance from here).
  const std::function<void(int64_t layer)>* on_layer_kv = nullptr;
};

// Rows of logits the pass returns for this batch (in run order).
int64_t logits_rows(const TokenBatch& batch);

}  // namespace ridge
