#pragma once
// The KV manager: per-sequence block tables over one BlockPool, with prefix reuse through the
// PrefixCache. The scheduler talks to it in sequence ids and token counts; what it learns back is
// one Allocation (did it fit, which blocks to copy first). Block tables only grow, until free().
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_pool.h"
#include "kv/kv_events.h"
#include "kv/prefix_cache.h"

namespace ridge {

using SeqId = int64_t;

struct KvConfig {
  int32_t n_blocks = 0;
  int32_t block_size = 16;  // tokens per block
  bool prefix_caching = true;
};

// How the KV budget divides into blocks (the seed's ledger: bytes per token = 2 (K and V) x layers
// x kv heads x head dim x bytes per element, or for latent attention layers x (kv_lora_rank +
// qk_rope_head_dim) x bytes per element; the caller passes the per-layer part, model/kv_shape.h).
struct KvMemoryInputs {
  int64_t bytes_per_token_per_layer = 0;
  int64_t n_layer = 0;
  int64_t budget_bytes = 0;
  int32_t block_size = 16;
  int64_t max_context = 0;  // tokens of one full-length sequence
};
struct KvMemoryPlan {
  int64_t bytes_per_token = 0;
  int64_t bytes_per_block = 0;
  int32_t n_blocks = 0;
  int64_t n_tokens = 0;
  int64_t full_context_seqs = 0;  // 0: the budget cannot hold one full sequence (an error for the caller)
};
KvMemoryPlan plan_kv_memory(const KvMemoryInputs& in);

class KvManager {
 public:
  explicit KvManager(const KvConfig& config);

  int32_t block_size() const { return pool_.block_size(); }

  // Told of every key the prefix cache gains (cache_full_blocks) or loses (eviction); null: nobody.
  // The sink must outlive the manager or be replaced first.
  void set_event_sink(KvEventSink* sink) { events_ = sink; }

  // A tier below the pool (kv/kv_tiers): cached blocks about to be reused are listed, bytes still
  // intact, until take_evicted(); the caller copies them out before the next forward pass.
  struct EvictedBlock {
    BlockId block = 0;
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens;
  };
  void keep_evictions(bool on) { keep_evictions_ = on; }
  std::vector<EvictedBlock> take_evicted() { return std::move(evicted_); }
  // After match_prefix: how many of the next full blocks of tokens `held` has (a lower tier), at
  // most up to tokens.size() - 1, with the hash of the prefix they start after.
  using TierLookup = std::function<bool(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens)>;
  int64_t lower_tier_blocks(SeqId seq, std::span<const int32_t> tokens, const TierLookup& held) const;
  uint64_t prefix_hash(SeqId seq) const { return seqs_.at(seq).last_hash; }

  // For a sequence that holds no blocks yet: take the cached blocks of its longest cached prefix.
  // Returns how many tokens they cover. At least one token is always left to compute, since the
  // step that computes the last token is the one that yields the next token's logits.
  // `root`: where the sequence's hash chain starts (a LoRA adapter's salt; kNoParent for the base).
  int64_t match_prefix(SeqId seq, std::span<const int32_t> tokens, uint64_t root = PrefixCache::kNoParent);

  struct Allocation {
    bool ok = false;                // false: nothing changed; the pool cannot hold these tokens now
    std::vector<BlockCopy> copies;  // copy-on-write: copy these before the step writes its K/V
  };
  // Slots for the next n_new_tokens positions of the sequence (after the ones it already has).
  Allocation allocate_for(SeqId seq, int64_t n_new_tokens);

  // Gives back the slots past the first n_slots positions (speculative tokens the target model
  // rejected), releasing blocks left empty. Their K/V is never cached: cache_full_blocks only ever
  // sees computed, accepted tokens.
  void truncate(SeqId seq, int64_t n_slots);

  // After a step computed K/V up to n_computed tokens: register the full blocks among them in the
  // prefix cache, so later requests (and this one, after a preemption) can reuse them.
  void cache_full_blocks(SeqId seq, std::span<const int32_t> tokens, int64_t n_computed);

  // The child shares every block of the parent (n > 1 samples); a shared partial last block is
  // copied on the first write.
  void fork(SeqId parent, SeqId child);
  void free(SeqId seq);

  std::span<const BlockId> block_table(SeqId seq) const;
  int64_t n_slots(SeqId seq) const;  // token positions with a slot
  bool has(SeqId seq) const { return seqs_.contains(seq); }

  int32_t n_free_blocks() const { return pool_.n_free(); }
  int32_t n_used_blocks() const { return pool_.n_used(); }
  int32_t n_blocks() const { return pool_.n_blocks(); }
  int64_t evictions() const { return pool_.evictions(); }
  int64_t prefix_query_tokens() const { return prefix_.query_tokens(); }
  int64_t prefix_hit_tokens() const { return prefix_.hit_tokens(); }
  const BlockPool& pool() const { return pool_; }

 private:
  struct SeqBlocks {
    std::vector<BlockId> table;
    int64_t n_slots = 0;
    int64_t n_hashed = 0;  // leading blocks already keyed in the prefix cache
    uint64_t last_hash = PrefixCache::kNoParent;
  };
  BlockId take_block();  // the pool has been checked to have one
  void forget_cached(BlockId block);  // the block is being reused: its prefix-cache key goes

  bool prefix_caching_;
  BlockPool pool_;
  PrefixCache prefix_;
  std::unordered_map<SeqId, SeqBlocks> seqs_;
  KvEventSink* events_ = nullptr;
  bool keep_evictions_ = false;
  std::vector<EvictedBlock> evicted_;
};

}  // namespace ridge
