#include "kv/kv_cache.h"

#include "core/error.h"

namespace ridge {
namespace {

KvLayout single_block(int64_t n_layer, int64_t capacity, int64_t n_kv_heads, int64_t head_dim, KvDtype dtype) {
  if (capacity <= 0 || capacity > INT32_MAX) fail("KV cache capacity must be in 1..2^31, got {}", capacity);
  return {n_layer, n_kv_heads, head_dim, int32_t(capacity), 1, dtype};
}

}  // namespace

KvCache::KvCache(int64_t n_layer, int64_t capacity, int64_t n_kv_heads, int64_t head_dim, KvDtype dtype)
    : capacity_(capacity), store_(single_block(n_layer, capacity, n_kv_heads, head_dim, dtype)) {}

void KvCache::resize(int64_t n) {
  if (n < 0 || n > capacity_) fail("KV cache position {} is outside the context of {}", n, capacity_);
  size_ = n;
}

}  // namespace ridge
