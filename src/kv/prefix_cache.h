#pragma once
// Which KV blocks hold which full-block token prefixes (vLLM's and nano-vllm's scheme).
// A block's key chains the previous block's key with this block's token ids, so one key names the
// whole prefix up to the block's end. The token ids are stored and compared on every hit, so a
// hash collision costs a miss, never a wrong answer.
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_pool.h"

namespace ridge {

class PrefixCache {
 public:
  explicit PrefixCache(int32_t block_size) : block_size_(block_size) {}

  static constexpr uint64_t kNoParent = 0;
  static uint64_t chain_hash(uint64_t parent, std::span<const int32_t> block_tokens);

  // The block holding exactly these tokens after the prefix named by `hash`, if cached.
  std::optional<BlockId> find(uint64_t hash, std::span<const int32_t> block_tokens) const;
  // Returns false (and keeps the older entry) when the key is already cached.
  bool insert(uint64_t hash, std::span<const int32_t> block_tokens, BlockId block, uint64_t parent = kNoParent);
  // The block was evicted and reused: drop its entry. Returns the key it had, if it had one.
  std::optional<uint64_t> erase_block(BlockId block);
  // The same, with what the entry named (a tier below the pool keeps the block under it).
  struct Erased {
    uint64_t hash = 0, parent = kNoParent;
    std::vector<int32_t> tokens;
  };
  std::optional<Erased> take_block(BlockId block);

  struct Match {
    std::vector<BlockId> blocks;  // cached blocks of the longest cached prefix, in order
    uint64_t last_hash = kNoParent;
  };
  // The longest cached prefix made of full blocks among the first max_tokens of tokens.
  // Counts the full blocks looked at as queried tokens and the matched ones as hit tokens.
  Match longest_prefix(std::span<const int32_t> tokens, int64_t max_tokens, uint64_t root = kNoParent);

  int64_t query_tokens() const { return query_tokens_; }
  int64_t hit_tokens() const { return hit_tokens_; }
  size_t size() const { return by_hash_.size(); }

 private:
  struct Entry {
    BlockId block;
    std::vector<int32_t> tokens;
    uint64_t parent = kNoParent;
  };
  int32_t block_size_;
  std::unordered_map<uint64_t, Entry> by_hash_;
  std::unordered_map<BlockId, uint64_t> hash_of_block_;
  int64_t query_tokens_ = 0;
  int64_t hit_tokens_ = 0;
};

}  // namespace ridge
