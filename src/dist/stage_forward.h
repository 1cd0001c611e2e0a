#pragma once
// One rank's part of a step of a model split across ranks (model/shard.h): its pipeline stage's
// layers over its tensor-parallel slice, with the KV store of its KV heads and layers. Every rank
// runs the same batch in lockstep. Pipeline stages run a batch as micro-batches (decode runs in
// groups, long prompts in position chunks) that flow through the stages back to back, so stage s
// computes piece i while stage s + 1 computes piece i - 1; the last stage's logits go to world
// rank 0, the only rank that samples.
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/paged_forward.h"
#include "dist/world.h"
#include "model/forward.h"
#include "model/shard.h"

namespace ridge::dist {

// The pieces a pipeline cuts a batch into: about `pieces` of them with equal token counts, runs
// kept whole where they fit and cut at positions where they do not (a prompt's chunks stay in
// order, so each attends to the KV of the chunks before it). Logits rows keep the batch's order.
struct BatchPiece {
  std::vector<int32_t> tokens;
  std::vector<SequenceRun> runs;
  TokenBatch batch() const { return {tokens, runs}; }
};
std::vector<BatchPiece> cut_batch(const TokenBatch& batch, int pieces, int64_t min_tokens);

// The positions of a scheduler's KV block one rank's store holds: all of them, or under Helix its
// 1/tp share (dealt out position by position). Error when the block does not divide evenly.
int32_t kv_block_share(const Model& shard_model, int32_t block_size, const Parallel& parallel);

class StageForward {
 public:
  StageForward(const Model& shard_model, const PagedForwardConfig& config, Parallel& parallel);
  ~StageForward();  // with RIDGE_DIST_STATS set: logs this rank's time in the tensor-parallel group's collectives
  // Called by every rank with the same batch; logits are filled on world rank 0 only.
  void forward(const TokenBatch& batch, std::vector<float>& logits);
  void copy_block(BlockId src, BlockId dst) { store_.copy_block(src, dst); }
  int64_t kv_bytes() const { return store_.bytes(); }
  const ModelSpec& spec() const { return forward_.spec(); }
  const MoeStats& moe_stats() const { return forward_.moe_stats(); }

 private:
  void gather_columns(const float* local, int64_t rows, const Partition& parts, float* full);
  void gather_rows(const float* local, std::span<const int64_t> rows, int64_t width, float* full);
  void forward_pipelined(const TokenBatch& batch, std::vector<float>& logits);
  void forward_data_parallel(const TokenBatch& batch, std::vector<float>& logits);

  const Model& model_;
  Parallel& parallel_;
  ModelForward forward_;
  KvStore store_;
  std::vector<float> blocks_, piece_logits_, x_in_;
  std::vector<int64_t> counts_;
  BatchPiece local_;  // data-parallel attention: this rank's sequences
  // Seconds in the tensor-parallel group's calls (waiting for the slowest rank included) and steps,
  // of decode steps (one token per sequence) [0] and the others [1]; collective_s_[kind_] is counting.
  double collective_s_[2] = {};
  int64_t steps_[2] = {};
  int kind_ = 0;
};

}  // namespace ridge::dist
