#pragma once
// The tiers below the KV pool: prefix-cache blocks evicted from the pool go to host RAM, what RAM's
// LRU pushes out goes to disk (one file a block, kv_tier_file), and a later prefix hit copies the
// block back instead of computing it again. Blocks are named as the prefix cache names them — the
// chained hash, the parent's hash and the block's token ids, all compared on every hit — and held
// as bytes: one block's data rows of every layer in layer order, then its scale rows of every layer
// (scaled types), exactly as KvStore lays out one block (kv_tier_gather / kv_tier_scatter).
//
// Threads: put() is meant for the engine thread and never waits for disk I/O (a background writer
// does it); load() may run on a loader thread at the same time. A disk directory belongs to one
// KvTiers at a time (a lock file says so); it survives restarts.
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kv/kv_store.h"
#include "kv/kv_tier_file.h"

namespace ridge {

struct KvTierConfig {
  int64_t ram_bytes = 0;    // --kv-offload-ram: the RAM tier's budget (0: no RAM tier)
  std::string disk_dir;     // --kv-offload-dir (empty: no disk tier)
  int64_t disk_bytes = 0;   // --kv-offload-size: the disk tier's budget, file sizes summed (0: no disk tier)
  // Which model and KV layout the blocks belong to (e.g. the weights' identity + kv_tier_identity):
  // written in every file, a file with another one is never served (and is deleted).
  std::string model_identity;
  int64_t block_bytes = 0;  // one block's payload, every layer, data and scales (kv_tier_block_bytes)
  int32_t block_size = 16;  // tokens a block
  // Blocks evicted from RAM wait in memory for the disk writer up to this many bytes (at least one
  // block); past it an evicted block is dropped rather than waited for.
  int64_t write_queue_bytes = int64_t(256) << 20;
};

class KvTiers {
 public:
  // Scans disk_dir (creating it if need be): indexes the files of this identity and shape, deletes
  // ours that are not (bad header or name, leftovers of an interrupted write) and trims to the budget.
  explicit KvTiers(KvTierConfig config);
  ~KvTiers();  // finishes the pending disk writes
  KvTiers(const KvTiers&) = delete;
  KvTiers& operator=(const KvTiers&) = delete;

  // A block evicted from the pool (tokens: block_size ids, payload: block_bytes). Kept in RAM; RAM's
  // LRU pushes blocks to the disk writer, disk's LRU deletes files past the budget. A block larger
  // than a budget is not kept in that tier. Waits for nothing but a copy of the payload.
  void put(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens, std::span<const uint8_t> payload);
  // Whether the block is held with exactly these tokens after that parent (a hash collision is a miss).
  bool contains(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const;
  // Copies the block's payload into out (block_bytes). A disk file is checked against its checksum
  // and header; a corrupt or truncated one is deleted, counted and not served (false; out then
  // holds no particular bytes).
  bool load(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens, std::span<uint8_t> out);

  struct Stats {
    int64_t ram_blocks = 0, ram_bytes = 0;    // resident in the RAM tier
    int64_t queued_blocks = 0;                // evicted from RAM, waiting for the disk writer
    int64_t disk_blocks = 0, disk_bytes = 0;  // files indexed, their sizes summed
    int64_t ram_hits = 0, disk_hits = 0, misses = 0;  // load() results (a queued block is a RAM hit)
    int64_t corrupt_files = 0;  // found bad at start-up or at load, deleted where they were ours
    int64_t disk_writes = 0, disk_write_failures = 0, disk_write_drops = 0;  // drops: the write queue was full
    int64_t ram_evictions = 0, disk_evictions = 0;
  };
  Stats stats() const;
  // Waits until every block queued for the disk is written (or failed to be).
  void flush();
  const KvTierConfig& config() const { return config_; }

 private:
  // A block held by a tier. `bytes` is what it costs that tier: its payload in RAM and the write
  // queue, its file on disk.
  struct Block {
    uint64_t parent = 0;
    std::vector<int32_t> tokens;
    std::shared_ptr<const std::vector<uint8_t>> payload;  // in memory; null on disk
    int64_t bytes = 0;
    uint64_t serial = 0;  // which write this is (a load drops a bad file only if it is still that one)
  };
  // Blocks by hash, most recently used first; the write queue uses it as a FIFO.
  class Lru {
   public:
    const Block* find(uint64_t hash) const;
    const Block* find(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const;
    void insert(uint64_t hash, Block block);  // as the most recent; replaces one of that hash
    void touch(uint64_t hash);
    Block take(uint64_t hash);  // removes it (an empty Block if absent)
    uint64_t oldest() const { return order_.back(); }
    size_t size() const { return by_hash_.size(); }
    int64_t bytes() const { return bytes_; }

   private:
    struct Node {
      Block block;
      std::list<uint64_t>::iterator at;
    };
    std::unordered_map<uint64_t, Node> by_hash_;
    std::list<uint64_t> order_;  // front: most recent
    int64_t bytes_ = 0;
  };

  bool disk_enabled() const { return !config_.disk_dir.empty() && config_.disk_bytes > 0; }
  std::string path_of(uint64_t hash) const;
  void scan_disk();
  // A block leaving RAM (or too big for it): queued for the disk writer if the disk wants it.
  void spill(uint64_t hash, Block block);
  bool spill_wanted(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens);
  void write_loop();

  const KvTierConfig config_;
  const KvBlockFormat format_;
  int lock_fd_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable work_, idle_;
  Lru ram_, queue_, disk_;
  bool stop_ = false;
  uint64_t serial_ = 0;
  Stats stats_;
  std::thread writer_;
};

// The payload of one pool block as KvTiers holds it, and a name for the KV layout to put into
// KvTierConfig::model_identity.
int64_t kv_tier_block_bytes(const KvStore& store);
void kv_tier_gather(const KvStore& store, BlockId block, std::span<uint8_t> payload);
void kv_tier_scatter(KvStore& store, BlockId block, std::span<const uint8_t> payload);
std::string kv_tier_identity(const KvLayout& layout);

}  // namespace ridge
