#include "kv/block_pool.h"

#include <stdexcept>
#include <string>

namespace ridge {

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size)
    : block_size_(block_size),
      ref_count_(static_cast<size_t>(n_blocks), 0),
      cached_(static_cast<size_t>(n_blocks), false),
      lru_pos_(static_cast<size_t>(n_blocks)) {
  if (n_blocks <= 0 || block_size <= 0) throw std::invalid_argument("BlockPool: n_blocks and block_size must be positive");
  free_.reserve(static_cast<size_t>(n_blocks));
  // Reversed so that allocation hands out block 0 first (easier to read in tests and dumps).
  for (BlockId b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

void BlockPool::check(BlockId block) const {
  if (block < 0 || block >= n_blocks()) throw std::out_of_range("BlockPool: no block " + std::to_string(block));
}

std::optional<BlockPool::Allocated> BlockPool::allocate() {
  BlockId block;
  bool evicted = false;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!cached_lru_.empty()) {
    block = cached_lru_.front();
    cached_lru_.pop_front();
    cached_[static_cast<size_t>(block)] = false;
    evicted = true;
    ++evictions_;
  } else {
    return std::nullopt;
  }
  ref_count_[static_cast<size_t>(block)] = 1;
  return Allocated{block, evicted};
}

void BlockPool::acquire(BlockId block) {
  check(block);
  int32_t& count = ref_count_[static_cast<size_t>(block)];
  if (count == 0) {
    if (!cached_[static_cast<size_t>(block)]) throw std::logic_error("BlockPool: acquire of a free, uncached block");
    cached_lru_.erase(lru_pos_[static_cast<size_t>(block)]);
  }
  ++count;
}

void BlockPool::release(BlockId block) {
  check(block);
  int32_t& count = ref_count_[static_cast<size_t>(block)];
  if (count <= 0) throw std::logic_error("BlockPool: release of a free block " + std::to_string(block));
  if (--count > 0) return;
  if (cached_[static_cast<size_t>(block)]) {
    lru_pos_[static_cast<size_t>(block)] = cached_lru_.insert(cached_lru_.end(), block);
  } else {
    free_.push_back(block);
  }
}

void BlockPool::mark_cached(BlockId block) {
  check(block);
  if (ref_count_[static_cast<size_t>(block)] == 0) throw std::logic_error("BlockPool: mark_cached on a free block");
  cached_[static_cast<size_t>(block)] = true;
}

int32_t BlockPool::blocks_to_write(BlockId block) const {
  check(block);
  return ref_count_[static_cast<size_t>(block)] > 1 || cached_[static_cast<size_t>(block)] ? 1 : 0;
}

std::optional<BlockPool::WriteTarget> BlockPool::prepare_write(BlockId block) {
  if (blocks_to_write(block) == 0) return WriteTarget{block, std::nullopt};
  std::optional<Allocated> fresh = allocate();
  if (!fresh) return std::nullopt;
  release(block);
  return WriteTarget{fresh->block, BlockCopy{block, fresh->block}, fresh->evicted};
}

}  // namespace ridge
