#pragma once
// What the KV manager tells the world about its prefix cache, for KV-aware routers outside the
// process (kv_events/ publishes it in vLLM's KV-event schema). Hashes are the prefix cache's chained
// block keys (PrefixCache::chain_hash): one names the whole token prefix up to its block's end.
//
// The KV manager calls these on the engine thread, in the order the cache changed; an
// implementation must return at once (queue and hand off, never block or do I/O here).
#include <cstdint>
#include <optional>
#include <span>

namespace ridge {

class KvEventSink {
 public:
  virtual ~KvEventSink() = default;

  // Full blocks newly keyed in the prefix cache, in sequence order: each hash is the parent of the
  // next; `parent` is the key of the block before the first (none: the first starts a sequence).
  // token_ids holds block_size tokens per block, block after block.
  virtual void on_blocks_stored(std::optional<uint64_t> parent, std::span<const uint64_t> block_hashes,
                                std::span<const int32_t> token_ids, int32_t block_size) = 0;
  // Cached blocks whose keys left the prefix cache (their blocks were evicted and reused).
  virtual void on_blocks_removed(std::span<const uint64_t> block_hashes) = 0;
  // Every key left the prefix cache at once.
  virtual void on_all_cleared() = 0;
};

}  // namespace ridge
