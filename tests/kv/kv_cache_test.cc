// The single-sequence cache: its one block holds whole tiles of 16 rows whatever its capacity (the
// vectorised attention reads positions sixteen at a time), while the capacity stays as asked.
#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/kv_cache.h"

namespace ridge {
namespace {

TEST(KvCache, OneBlockOfWholeTilesAndTheCapacityAsked) {
  for (int64_t capacity : {1, 16, 17, 529, 4096}) {
    KvCache cache(2, capacity, 2, 8);
    EXPECT_EQ(cache.capacity(), capacity);
    EXPECT_EQ(cache.store().layout().n_blocks, 1);
    EXPECT_EQ(cache.store().layout().block_size % 16, 0);
    EXPECT_GE(cache.store().layout().block_size, capacity);
    EXPECT_LT(cache.store().layout().block_size, capacity + 16);
    EXPECT_THROW(cache.resize(capacity + 1), Error);
  }
  EXPECT_THROW(KvCache(2, 0, 2, 8), Error);
}

}  // namespace
}  // namespace ridge
