#pragma once
// The part of a model one rank holds when it is split across processes: a pipeline stage's
// contiguous layers, and within a stage a tensor-parallel slice of each layer — its KV heads (and
// their query heads), a part of the FFN (and of each expert, or whole experts under expert
// parallelism), a row range of the vocabulary projection.
//
// Two ways to put a layer's slices back together (TpMode):
// - Gather (default): every matrix is split by its output rows; after each one the ranks'
//   column blocks are all-gathered. Each value is computed by one rank exactly as one process
//   computes it, so the split model's output is bit for bit the single process's (int8
//   activation rounding amplifies any reassociation into a visible difference). Four all-gathers
//   per layer: attention heads, attention output, FFN activation, FFN output.
// - Reduce (Megatron): the attention output and FFN down matrices are split by their input
//   columns (on the weight type's block boundaries) and their partial sums all-reduced: two
//   all-reduces per layer, about half the bytes, results within rounding of one process.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/huge_pages.h"
#include "model/weights.h"

namespace ridge {

enum class TpMode { Gather, Reduce };

struct ShardRequest {
  int tp_rank = 0, tp_size = 1;
  int stage = 0, n_stages = 1;
  bool expert_parallel = false;  // experts whole, spread over the tensor-parallel group
  TpMode tp_mode = TpMode::Gather;
  // With expert_parallel: attention (and everything but the experts) replicated and run
  // data-parallel, each rank on its own sequences; tokens go to their experts' ranks and back by
  // all-to-all (SGLang's --enable-dp-attention, wide EP).
  bool dp_attention = false;
  // Helix (KV parallelism over the whole tensor-parallel group): attention weights replicated, each
  // rank keeps the K/V of positions p with p % tp_size == tp_rank and attends over them; the ranks'
  // partial softmax results are all-gathered and merged in rank order. FFN and experts split as usual.
  bool helix = false;
};

struct Slice {  // [begin, begin + count)
  int64_t begin = 0, count = 0;
  int64_t end() const { return begin + count; }
};

// How the ranks of a tensor-parallel group divide one dimension: parts[r] is rank r's, in order.
struct Partition {
  std::vector<Slice> parts;
  int64_t total() const { return parts.empty() ? 0 : parts.back().end(); }
};

struct ModelShard {
  ShardRequest request;
  Slice layers;          // this stage's layers
  Partition kv_heads;    // with fewer KV heads than ranks, each is replicated on tp / n_head_kv ranks
  Partition q_heads;     // query heads: those of the rank's KV heads (a share of them when replicated)
  Partition q_cols;      // the query heads' columns (heads x head_dim)
  Partition embd;        // Gather: rows of the attention output, FFN down and expert down matrices
  Partition ff;          // dense FFN width
  Partition ff_expert;   // every expert's width (whole under expert parallelism)
  Partition experts;     // expert ids (all on every rank unless expert parallelism)
  Partition shared_ff;   // the shared expert's width
  Partition vocab;       // rows of the vocabulary projection
  bool attention_split = true;  // false: attention replicated (latent attention)

  int rank() const { return request.tp_rank; }
  const Slice& mine(const Partition& p) const { return p.parts[size_t(rank())]; }
  bool first_stage() const { return request.stage == 0; }
  bool last_stage() const { return request.stage == request.n_stages - 1; }
  bool holds_layer(int64_t l) const { return l >= layers.begin && l < layers.end(); }
  bool split() const { return request.tp_size > 1; }
  bool dp_attention() const { return split() && request.dp_attention; }
  bool gather() const { return split() && !request.dp_attention && request.tp_mode == TpMode::Gather; }
  bool reduce() const { return split() && !request.dp_attention && request.tp_mode == TpMode::Reduce; }
  bool holds_expert(int64_t e) const { return e >= mine(experts).begin && e < mine(experts).end(); }
  // The shapes this rank's weights have (heads, widths); n_layer, n_embd and n_vocab stay whole.
  ModelSpec local_spec(const ModelSpec& full) const;
};

// Balanced pipeline stages: stage s holds layers [bounds[s], bounds[s + 1]), balancing the bytes
// each stage reads per token (its layers' weights; the vocabulary projection on the last).
std::vector<int64_t> stage_bounds(const ModelSpec& spec, const ModelWeights& weights, int n_stages);

// What rank (tp_rank, stage) holds. Error when the model does not split that way (fewer KV
// heads than ranks, a Reduce slice off the weight type's blocks, a QK-norm over all heads).
ModelShard plan_shard(const ModelSpec& spec, const ModelWeights& weights, const ShardRequest& request);

// Copies the shard's slices of `weights` into one new buffer and points the views there; weights
// the rank does not hold become empty. The caller keeps the buffer alive.
std::unique_ptr<HugePageBuffer> shard_weights(ModelWeights& weights, const ModelSpec& spec, const ModelShard& shard);

}  // namespace ridge
