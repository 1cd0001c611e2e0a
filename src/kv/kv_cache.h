#pragma once
// The K/V history of one sequence for the single-sequence tools (`ridge run`, `logits`, `bench`):
// a KvStore of a single block as long as the context, so the same paged kernels serve both.
#include <array>
#include <cstdint>
#include <span>

#include "kv/kv_store.h"

namespace ridge {

class KvCache {
 public:
  KvCache(int64_t n_layer, int64_t capacity, int64_t n_kv_heads, int64_t head_dim, KvDtype dtype = KvDtype::F16);
  // A model's own shape (its block size and count replaced by one block of `capacity`).
  KvCache(const KvLayout& shape, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return size_; }  // positions filled
  void resize(int64_t n);                 // keep the first n positions (n <= size) or mark n filled
  void clear() { size_ = 0; }
  int64_t bytes() const { return store_.bytes(); }

  KvStore& store() { return store_; }
  std::span<const BlockId> block_table() const { return table_; }

 private:
  int64_t capacity_;
  int64_t size_ = 0;
  KvStore store_;
  std::array<BlockId, 1> table_{0};
};

}  // namespace ridge
