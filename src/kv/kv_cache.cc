#include "kv/kv_cache.h"

#include "core/error.h"

namespace ridge {
namespace {

KvLayout single_block(KvLayout shape, int64_t capacity) {
  if (capacity <= 0 || capacity > INT32_MAX - 15) fail("KV cache capacity must be in 1..2^31, got {}", capacity);
  // Rows in whole tiles of 16: the vectorised attention kernels read a block's positions sixteen at a
  // time and take a slow path for the rest (a 529-position cache prefilled 3.3x slower than 768).
  shape.block_size = int32_t((capacity + 15) / 16 * 16);
  shape.n_blocks = 1;
  return shape;
}

}  // namespace

KvCache::KvCache(int64_t n_layer, int64_t capacity, int64_t n_kv_heads, int64_t head_dim, KvDtype dtype)
    : KvCache(KvLayout{n_layer, n_kv_heads, head_dim, 16, 1, dtype}, capacity) {}

KvCache::KvCache(const KvLayout& shape, int64_t capacity) : capacity_(capacity), store_(single_block(shape, capacity)) {}

void KvCache::resize(int64_t n) {
  if (n < 0 || n > capacity_) fail("KV cache position {} is outside the context of {}", n, capacity_);
  size_ = n;
}

}  // namespace ridge
