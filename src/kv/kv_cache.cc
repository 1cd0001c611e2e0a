#include "kv/kv_cache.h"

#include "core/error.h"

namespace ridge {

KvCache::KvCache(int64_t n_layer, int64_t capacity, int64_t kv_dim)
    : n_layer_(n_layer), capacity_(capacity), kv_dim_(kv_dim), data_(size_t(n_layer * 2 * capacity * kv_dim)) {
  if (capacity <= 0) fail("KV cache capacity must be positive, got {}", capacity);
}

void KvCache::resize(int64_t n) {
  if (n < 0 || n > capacity_) fail("KV cache position {} is outside the context of {}", n, capacity_);
  size_ = n;
}

}  // namespace ridge
