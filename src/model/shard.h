#pragma once
// The part of a model one rank holds when it is split across processes: a pipeline stage's
// contiguous layers, and within a stage a tensor-parallel slice of each — its KV heads (and their
// query heads), a column range of the FFN (and of each expert, or whole experts under expert
// parallelism), a row range of the vocabulary projection. Slices fall on the weight types'
// block boundaries, so a slice of a quantized matrix is its rows' own bytes; the sums of the
// row-parallel matrices (attention output, FFN down, experts) are completed by an all-reduce.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/huge_pages.h"
#include "model/weights.h"

namespace ridge {

struct ShardRequest {
  int tp_rank = 0, tp_size = 1;
  int stage = 0, n_stages = 1;
  bool expert_parallel = false;  // experts whole, spread over the tensor-parallel group
};

struct Slice {  // [begin, begin + count)
  int64_t begin = 0, count = 0;
  int64_t end() const { return begin + count; }
};

struct ModelShard {
  ShardRequest request;
  Slice layers;          // this stage's layers
  Slice kv_heads;        // local KV heads (query heads follow: gqa_group per KV head)
  Slice ff;              // dense FFN columns
  Slice ff_expert;       // columns of every expert (all of them when expert_parallel)
  Slice experts;         // experts held (all of them unless expert_parallel)
  Slice shared_ff;       // the shared expert's columns
  Slice vocab;           // rows of the vocabulary projection
  bool attention_split = true;  // false: attention replicated (latent attention), no all-reduce after it

  bool first_stage() const { return request.stage == 0; }
  bool last_stage() const { return request.stage == request.n_stages - 1; }
  bool holds_layer(int64_t l) const { return l >= layers.begin && l < layers.end(); }
  // The whole model's sums need an all-reduce across the tensor-parallel group.
  bool split() const { return request.tp_size > 1; }
  // The shapes this rank's weights have (heads, widths); n_layer, n_embd and n_vocab stay whole.
  ModelSpec local_spec(const ModelSpec& full) const;
};

// The rows of the vocabulary projection tensor-parallel rank `rank` of `ranks` holds.
Slice vocab_slice(int64_t n_vocab, int ranks, int rank);

// Balanced pipeline stages: stage s holds layers [bounds[s], bounds[s + 1]), balancing the bytes
// each stage reads per token (its layers' weights; the vocabulary projection on the last).
std::vector<int64_t> stage_bounds(const ModelSpec& spec, const ModelWeights& weights, int n_stages);

// What rank (tp_rank, stage) holds. Error when the model does not split that way (fewer KV
// heads than ranks, a slice off the weight type's blocks, a QK-norm over all heads).
ModelShard plan_shard(const ModelSpec& spec, const ModelWeights& weights, const ShardRequest& request);

// Copies the shard's slices of `weights` into one new buffer and points the views there; weights
// the rank does not hold become empty. The caller keeps the buffer alive.
std::unique_ptr<HugePageBuffer> shard_weights(ModelWeights& weights, const ModelSpec& spec, const ModelShard& shard);

}  // namespace ridge
