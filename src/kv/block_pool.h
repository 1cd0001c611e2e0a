#pragma once
// A fixed pool of KV blocks, each holding the K/V of block_size consecutive tokens of one sequence.
// Blocks are reference-counted so sequences can share them (a common prefix, n > 1 samples).
// A block whose count drops to zero is free. Free blocks that still hold a cached prefix wait in
// LRU order and are reused (evicted) only when no plain free block is left, so a later request can
// still find them. Only ids and counts live here; the K/V bytes belong to the runner.
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

namespace ridge {

using BlockId = int32_t;

// The runner copies block src into block dst before the step's forward pass (copy-on-write).
struct BlockCopy {
  BlockId src;
  BlockId dst;
};

class BlockPool {
 public:
  BlockPool(int32_t n_blocks, int32_t block_size);

  int32_t n_blocks() const { return static_cast<int32_t>(ref_count_.size()); }
  int32_t block_size() const { return block_size_; }
  // Blocks with no owner, cached or not: what allocate() can still hand out.
  int32_t n_free() const { return static_cast<int32_t>(free_.size() + cached_lru_.size()); }
  int32_t n_used() const { return n_blocks() - n_free(); }
  int32_t n_cached_free() const { return static_cast<int32_t>(cached_lru_.size()); }
  int64_t evictions() const { return evictions_; }

  struct Allocated {
    BlockId block;
    bool evicted;  // it held a cached prefix: the caller must forget that entry
  };
  // A block with count 1: a plain free block first, else the least recently used cached one.
  std::optional<Allocated> allocate();

  // One more owner (fork, or a prefix hit). A free cached block leaves the LRU queue.
  void acquire(BlockId block);
  // One owner fewer; at zero the block becomes free (cached blocks join the LRU queue's newest end).
  void release(BlockId block);
  int32_t ref_count(BlockId block) const { return ref_count_[static_cast<size_t>(block)]; }

  // The block now holds a full, hashed prefix: when freed it waits in the LRU queue.
  void mark_cached(BlockId block);
  bool is_cached(BlockId block) const { return cached_[static_cast<size_t>(block)]; }

  // Before writing into `block`: a block with other owners (or a cached one) must not change,
  // so a fresh block replaces it and the caller copies the old contents over.
  struct WriteTarget {
    BlockId block;
    std::optional<BlockCopy> copy;
    bool evicted = false;  // the fresh block held a cached prefix: forget that entry
  };
  std::optional<WriteTarget> prepare_write(BlockId block);
  // How many fresh blocks prepare_write(block) would take (0 or 1).
  int32_t blocks_to_write(BlockId block) const;

 private:
  void check(BlockId block) const;

  int32_t block_size_;
  std::vector<int32_t> ref_count_;
  std::vector<bool> cached_;
  std::vector<BlockId> free_;       // plain free blocks, used as a stack
  std::list<BlockId> cached_lru_;   // free cached blocks, least recently used first
  std::vector<std::list<BlockId>::iterator> lru_pos_;  // valid while the block is in cached_lru_
  int64_t evictions_ = 0;
};

}  // namespace ridge
