#pragma once
// The CPU forward pass of every architecture (model/arch/registry.h): token embeddings, the
// architecture's layer loop over the blocks below, the final norm and the vocabulary projection.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/matmul.h"
#include "kernels/ref/attention.h"
#include "kv/kv_cache.h"
#include "kv/kv_store.h"
#include "model/arch/architecture.h"
#include "model/lora/lora_adapter.h"
#include "model/moe_stats.h"
#include "model/shard.h"
#include "model/token_batch.h"
#include "model/weights.h"

namespace ridge {

class LlamaMirrorForward;

// How the CPU pass rounds: its own kernels (kernels/cpu), or llama.cpp's arithmetic repeated bit
// for bit (model/llama_mirror.h), for conformance checks.
enum class Numerics { Native, Ggml };
std::optional<Numerics> parse_numerics(std::string_view name);  // "native", "ggml"

// The batch's token embeddings into x (n_tokens, n_embd), scaled by spec.embedding_scale, each
// token's position and run index. Error on an id outside the vocabulary.
void embed_batch(const Model& model, const TokenBatch& batch, std::vector<float>& x, std::vector<int32_t>& positions,
                 std::vector<int32_t>& run_of);
// rows(first token, count) for each run's tokens whose logits are wanted, in run order.
void for_each_logits_rows(const TokenBatch& batch, const std::function<void(int64_t first, int64_t n)>& rows);

// Tensor parallelism as the pass sees it (model/shard.h): the sums that complete its partial
// outputs, and the logits of every rank's vocabulary slice put together. Set by dist/.
struct TensorParallelOps {
  // data (n floats) becomes the sum over the group (TpMode::Reduce).
  std::function<void(float* data, int64_t n)> all_reduce_sum;
  // full (rows, parts.total()) from every rank r's local (rows, parts[r].count): column blocks side by side.
  std::function<void(const float* local, int64_t rows, const Partition& parts, float* full)> gather_columns;
  // full (sum of rows, width) from every rank r's local (rows[r], width): row blocks one after another.
  std::function<void(const float* local, std::span<const int64_t> rows, int64_t width, float* full)> gather_rows;
  // Data-parallel attention: send_bytes[d] bytes (at send_offsets[d]) to each rank d, recv_bytes[s]
  // (at recv_offsets[s]) from each rank s (Communicator::all_to_all_v).
  std::function<void(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                     void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets)>
      all_to_all;
};

// Sees the input of every dense matmul, after its fused prologue (norm, activation): what
// `ridge imatrix` sums. The weight is named by its data pointer (a WeightRef of the model).
class MatmulObserver {
 public:
  virtual ~MatmulObserver() = default;
  virtual void observe(const void* weight_data, const float* x, int64_t n_tokens, int64_t cols) = 0;
};

class ModelForward final : private LayerPass {
 public:
  // n_threads <= 0: the OpenMP default (OMP_NUM_THREADS, else one per core).
  explicit ModelForward(const Model& model, int n_threads = 0);
  ~ModelForward();
  int n_threads() const { return pool_->size(); }
  void set_threads(int n_threads);  // a new pool of n_threads (<= 0: the default as above)
  // Error when Ggml is asked for a model or CPU outside what the mirror covers.
  void set_numerics(Numerics numerics);

  const ModelSpec& spec() const { return model_.spec; }  // the whole model's shapes
  const ModelSpec& local_spec() const { return spec_; }  // the shapes of this rank's weights
  void set_tensor_parallel(TensorParallelOps ops) { tp_ = std::move(ops); }
  // Helix (ShardRequest::helix): this rank's place in the KV-parallel group, which is the
  // tensor-parallel group (its gather_rows merges the ranks' partial attention). Rank r keeps the
  // K/V of position p when p % size == r, in slot (p % B) / size of the block's share: a store's
  // block holds B / size positions of the scheduler's block of B. Attention runs over the rank's own
  // positions; the ranks' partial softmax results are merged in rank order.
  struct KvParallel {
    int rank = 0, size = 1;
  };
  void set_kv_parallel(KvParallel kvp) { kvp_ = kvp; }
  KvCache make_cache(int64_t n_ctx, KvDtype dtype = KvDtype::F16) const;
  KvLayout kv_layout(int32_t block_size, int32_t n_blocks, KvDtype dtype) const;

  // One pass over a ragged batch of sequence runs, reading and writing K/V in `store`.
  // logits becomes (logits_rows(batch), n_vocab), rows in run order (n_vocab: the head's rows, when a
  // draft's head holds only the first tokens of the vocabulary). A token's result does not
  // depend on what else is in the batch. Error when a run's blocks do not cover its positions or
  // an id is outside the vocabulary.
  void forward(const TokenBatch& batch, KvStore& store, std::vector<float>& logits);

  // A pipeline stage's part of forward(): the layers this rank holds, over the batch's tokens
  // embedded (x_in null: the first stage) or over the residual stream the previous stage sent
  // (x_in: n_tokens x n_embd); residual() is the stream afterwards.
  void run_layers(const TokenBatch& batch, KvStore& store, const float* x_in);
  const std::vector<float>& residual() const { return x_; }
  // The last stage's part: the final norm and the vocabulary projection of the wanted rows.
  void project(const TokenBatch& batch, std::vector<float>& logits);

  // Single sequence: `tokens` at positions cache.size() .. cache.size() + n - 1, appending their K/V.
  // logits becomes (n_tokens, n_vocab) when all_logits, else (1, n_vocab) for the last token.
  // prompt: the tokens are prompt positions (SequenceRun::prompt_end), for the prefill kernels.
  void forward(std::span<const int32_t> tokens, KvCache& cache, bool all_logits, std::vector<float>& logits,
               bool prompt = false);

  // The LoRA adapter of the single-sequence forward() above (null: the base); a TokenBatch names
  // its runs' adapters itself. The adapter must outlive its use.
  void set_adapter(const lora::LoraAdapter* adapter) { adapter_ = adapter; }

  // Every dense matmul's input goes to `observer` too (null: none). Slower; for calibration.
  void set_matmul_observer(MatmulObserver* observer) { observer_ = observer; }

  // Tokens routed to each expert so far (MoE models; empty otherwise).
  const MoeStats& moe_stats() const { return moe_stats_; }

 private:
  // The blocks (model/arch/layer_pass.h), over the current batch.
  void attention(const LayerWeights& w, int64_t layer) override;
  void latent_attention(const LayerWeights& w, int64_t layer) override;
  void dense_ffn(const LayerWeights& w) override;
  void moe_ffn(const LayerWeights& w, int64_t layer) override;

  void check(const TokenBatch& batch, const KvStore& store) const;
  void qk_norm(const LayerWeights& w, int64_t n_tokens);
  void whole_qk_norm_split(const LayerWeights& w, int64_t n_tokens);
  // An attention computed tile by tile (kernels/cpu/attention.h) for each of n_groups queries of
  // every token (its KV heads): tile() writes one tile's partial result, merge() merges a query's
  // tiles in order into its output. Tiles are those of positions first_position_[t]..positions_[t].
  struct TiledAttention {
    int64_t n_groups;
    int64_t partial_floats;  // one tile's partial result
    int64_t scratch_floats;  // a thread's scratch for one tile
    std::function<void(int64_t t, int64_t group, int64_t tile, float* scratch, float* partial)> tile;
    std::function<void(int64_t t, int64_t group, const float* partials, int64_t n_tiles)> merge;
    // Optional: tokens t .. t + n - 1 of one sequence over one tile at once, token i's partial at
    // partials + i * stride, each the bits `tile` gives it (kernels/cpu/attention.h). scratch:
    // block_scratch_floats for up to cpu::kAttentionQueryBlock tokens.
    std::function<void(int64_t t, int64_t n, int64_t group, int64_t tile, float* scratch, float* partials,
                       int64_t stride)>
        tiles = {};
    int64_t block_scratch_floats = 0;
  };
  void attend(const TiledAttention& attention, int64_t n_tokens);
  // Helix (blocks/kv_parallel.cc). The scheduler's block size: the store's times the group's size.
  int32_t table_block_size(const KvStore& store) const { return store.layout().block_size * kvp_.size; }
  bool kv_parallel() const { return kvp_.size > 1; }
  // Token t's K/V (v null: a keys-only store) into its block, when this rank keeps its position.
  void write_kv(KvStore& store, int64_t layer, int64_t t, const float* k, const float* v);
  // positions_ and first_position_ become indices into this rank's own positions for attend()
  // (a token whose history holds none of them gets an empty range); end_local_positions restores them.
  void begin_local_positions(int64_t n_tokens);
  void end_local_positions();
  // Where a token's merged partial for one unit (a KV head's group of query heads; MLA: all heads) goes.
  float* kv_partial(int64_t t, int64_t unit) { return kvp_mine_.data() + (t * kvp_units_ + unit) * kvp_unit_floats_; }
  void reserve_kv_partials(int64_t n_tokens, int64_t units, int64_t unit_floats);
  // Every rank's partials all-gathered; finish(t, unit, partials) gets the unit's partials of every
  // rank one after another, in rank order.
  void merge_kv_parallel(int64_t n_tokens, const std::function<void(int64_t t, int64_t unit, const float* partials)>& finish);
  // y (for each head h: rows at y + t * y_row + h * y_head) = heads[h] applied to x (rows at
  // x + t * x_row + h * x_head): one small matmul per head (MLA's absorption and decompression).
  void head_matmuls(const std::vector<WeightRef>& heads, const float* x, int64_t x_row, int64_t x_head, float* y,
                    int64_t y_row, int64_t y_head, int64_t n_tokens);
  // out (n_tokens, n_embd) = the gated FFN of x (n_tokens, n_embd) through gate/up/down, the input
  // RMS-normalised by `norm` when present.
  // width: under TpMode::Gather, how the ranks split the FFN's width (this rank holds its part of
  // gate and up, and its rows of down); null otherwise.
  void gated_ffn(const WeightRef& gate, const WeightRef& up, const WeightRef& down, const WeightRef* norm,
                 const float* x, int64_t n_tokens, float* out, const Partition* width = nullptr, bool lora = false);
  // out (n_tokens, n_embd) = w x: under TpMode::Gather this rank's rows of w, then all ranks' gathered.
  void output_rows(const WeightRef& w, const float* x, int64_t n_tokens, float* out,
                   const cpu::MatmulPrologue& prologue = {});
  // full (rows, parts.total()) from every rank's columns (TpMode::Gather).
  void gather_columns(const float* local, int64_t rows, const Partition& parts, std::vector<float>& full);
  bool gather_mode() const;  // a tensor-parallel split put together by all-gathers
  // gate[i] = act(gate[i]) * up[i] over n values: the bits the fused SwiGLU / GeGLU prologue gives.
  void activate(float* gate, const float* up, int64_t n) const;
  // x_ += (post-normed) out; `partial`: out is this rank's share of a sum split across ranks.
  void add_residual(float* out, const WeightRef& post_norm, int64_t n_tokens, bool partial);
  bool split_attention() const;  // attention heads split across ranks
  bool reduce_attention() const;  // ... and its output all-reduced (TpMode::Reduce)
  bool reduce_ffn() const;        // the FFN's (and experts') output all-reduced (TpMode::Reduce)
  bool holds_expert(int64_t expert) const;  // this rank runs it (all, unless experts are spread over ranks)
  void route(const LayerWeights& w, int64_t n_tokens);
  void run_experts(const LayerWeights& w, int64_t layer, int64_t n_tokens);
  // Data-parallel attention: this rank's rows go to their experts' ranks, the rows other ranks
  // send for this rank's experts are computed, and every output goes back where it came from.
  void run_experts_dispatched(const LayerWeights& w, int64_t layer);
  bool dp_attention() const;
  void matmul(std::initializer_list<cpu::MatmulJob> jobs, const float* x, int64_t n_tokens,
              const cpu::MatmulPrologue& prologue = {});
  // LoRA (blocks/lora_block.cc): the batch's tokens grouped by their runs' adapters, and each
  // group's low-rank addend of one target matrix added to y (n_tokens, d_out); x (n_tokens, d_in)
  // is the matmul's input before its prologue, which is applied here to the adapted rows alone.
  void group_lora_tokens(const TokenBatch& batch);
  void add_lora(lora::Target target, const float* x, int64_t d_in, const cpu::MatmulPrologue& prologue, float* y, int64_t d_out);

  const Model& model_;
  const ModelSpec spec_;  // local_spec()
  const Architecture& arch_;
  TensorParallelOps tp_;
  KvParallel kvp_;
  std::vector<float> kvp_mine_, kvp_all_;  // Helix: this rank's merged partials, and every rank's
  int64_t kvp_units_ = 0, kvp_unit_floats_ = 0;
  std::vector<int32_t> global_positions_;  // Helix: positions_ while it holds local indices
  std::vector<float> local_logits_;  // (rows, this rank's vocabulary slice)
  std::vector<float> gathered_;      // TpMode::Gather: a block's input put together from all ranks
  std::vector<float> part_;          // TpMode::Gather: this rank's columns of a block's output
  const TokenBatch* batch_ = nullptr;  // the batch being run
  KvStore* store_ = nullptr;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<LlamaMirrorForward> mirror_;  // set: the pass runs there
  cpu::MatmulScratch matmul_scratch_;
  MoeStats moe_stats_;
  MatmulObserver* observer_ = nullptr;
  std::vector<float> observed_;  // the observer's copy of a matmul input, prologue applied
  std::vector<float> scores_;    // per thread: one attention tile's scratch (TiledAttention::scratch_floats)
  std::vector<float> partials_;  // attention tiles' partial softmax results (kernels/cpu/attention.h)
  std::vector<int64_t> block_start_;  // prefill attention: each block's first token, then n
  std::vector<int64_t> tile_base_;  // per token: index of its first tile in partials_ (split mode)
  std::vector<int32_t> first_position_;  // per token: the first position its layer's window sees
  std::vector<float> rope_freq_factors_;  // (rope_dim / 2) or empty
  // Activations for the current batch of tokens.
  std::vector<float> x_;       // (n_tokens, n_embd) residual stream
  std::vector<float> xn_;      // (n_tokens, n_embd) normalised input of a block
  std::vector<float> q_;       // (n_tokens, q_dim)
  std::vector<float> k_;       // (n_tokens, kv_dim)
  std::vector<float> v_;       // (n_tokens, kv_dim)
  std::vector<float> attn_;    // (n_tokens, q_dim; MLA: n_head * v_head_dim)
  std::vector<float> proj_;    // (n_tokens, n_embd)
  std::vector<float> gate_;    // (n_tokens, n_ff)
  std::vector<float> up_;      // (n_tokens, n_ff)
  // Multi-head latent attention.
  std::vector<float> q_low_;       // (n_tokens, q_lora_rank) the query bottleneck
  std::vector<float> latent_;      // (n_tokens, kv_lora_rank + qk_rope_head_dim) what the cache keeps
  std::vector<float> q_latent_;    // (n_tokens, n_head, kv_lora_rank + qk_rope_head_dim) absorbed queries
  std::vector<float> attn_latent_; // (n_tokens, n_head, kv_lora_rank) attended latents
  std::vector<float> head_in_, head_out_;  // one head's rows of a per-head matmul
  std::vector<int32_t> positions_;  // (n_tokens)
  std::vector<int32_t> run_of_;     // (n_tokens) index of the token's run
  struct LoraGroup {
    const lora::LoraAdapter* adapter;
    std::vector<int64_t> tokens;
  };
  std::vector<LoraGroup> lora_groups_;  // this batch's adapters and their tokens (empty: none)
  int64_t layer_ = 0;                   // the layer the blocks are in (set by attention())
  const lora::LoraAdapter* adapter_ = nullptr;  // set_adapter
  std::vector<float> lora_x_;           // (n_tokens, d_in) the adapted tokens' matmul inputs, prologue applied
  std::vector<uint8_t> lora_x_done_;    // per token: its row of lora_x_ is computed
  struct PrologueKey {
    const float* x = nullptr;
    cpu::MatmulPrologue::Kind kind = cpu::MatmulPrologue::Kind::None;
    const float* norm = nullptr;
    const float* up = nullptr;
    int64_t d_in = 0, layer = -1;
    bool operator==(const PrologueKey&) const = default;
  };
  PrologueKey lora_prologue_key_;       // what lora_x_ holds
  struct LoraJob {
    const lora::LoraMatrix* m;
    int64_t first, n;  // its rows in lora_x_rows_ / lora_y_rows_
    int64_t t_first;   // its (n, rank) in lora_t_
  };
  std::vector<LoraJob> lora_jobs_;                      // one target's adapters
  std::vector<const float*> lora_x_rows_;                // their tokens' inputs (prologue applied)
  std::vector<float*> lora_y_rows_;                      // their tokens' outputs
  std::vector<float> lora_t_;                            // x A^T of each
  std::vector<std::pair<int64_t, int64_t>> lora_items_;  // (job, first row or column) per parallel item
  // Consecutive rows of one kind (a prompt's positions, or not) of the whole batch and of the rows
  // whose logits are wanted; a matmul over either splits along them (prefill kernels for the first).
  struct RowSegment {
    int64_t begin, n;
    bool prefill;
  };
  std::vector<RowSegment> token_segments_, logits_segments_;
  // Appends s (rows right after the last segment's), merged into the last one when of its kind.
  static void append_segment(std::vector<RowSegment>& segments, const RowSegment& s);
  const std::vector<RowSegment>* segments_ = nullptr;  // those of the rows being multiplied now
  std::vector<cpu::MatmulInput> segment_inputs_;
  std::vector<cpu::GroupedMatmulJob> segment_jobs_;
  // MoE routing of the current layer.
  std::vector<float> router_logits_;    // (n_tokens, n_expert)
  std::vector<int32_t> chosen_;         // (n_tokens, n_expert_used) expert ids
  std::vector<float> chosen_weight_;    // (n_tokens, n_expert_used)
  std::vector<int32_t> expert_tokens_;  // tokens grouped by expert (expert_begin_ offsets)
  std::vector<int32_t> expert_slot_;    // parallel to expert_tokens_: the slot in chosen_ it came from
  std::vector<int64_t> expert_begin_;   // (n_expert + 1)
  std::vector<float> expert_in_;        // (tokens of one expert, n_embd) gathered inputs
  std::vector<float> expert_out_;       // (tokens of one expert, n_embd)
  std::vector<float> moe_out_;          // (n_tokens, n_embd)
  // Data-parallel attention: the rows this rank computes for the others, and their experts.
  std::vector<float> dispatched_in_, dispatched_out_;
  std::vector<float> dispatched_grouped_, dispatched_grouped_out_;  // the received rows by expert, and their outputs
  std::vector<int32_t> dispatched_expert_;
};

}  // namespace ridge
