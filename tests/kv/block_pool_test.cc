#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ridge {
namespace {

TEST(BlockPool, AllocatesEveryBlockOnceThenRunsOut) {
  BlockPool pool(4, 16);
  std::vector<bool> seen(4, false);
  for (int i = 0; i < 4; ++i) {
    auto got = pool.allocate();
    ASSERT_TRUE(got);
    EXPECT_FALSE(got->evicted);
    EXPECT_FALSE(seen[static_cast<size_t>(got->block)]);
    seen[static_cast<size_t>(got->block)] = true;
    EXPECT_EQ(pool.ref_count(got->block), 1);
  }
  EXPECT_EQ(pool.n_free(), 0);
  EXPECT_FALSE(pool.allocate());
}

TEST(BlockPool, SharedBlockIsFreeOnlyAfterLastRelease) {
  BlockPool pool(2, 16);
  BlockId b = pool.allocate()->block;
  pool.acquire(b);  // fork
  EXPECT_EQ(pool.ref_count(b), 2);
  pool.release(b);
  EXPECT_EQ(pool.n_free(), 1);
  pool.release(b);
  EXPECT_EQ(pool.n_free(), 2);
  EXPECT_THROW(pool.release(b), std::logic_error);  // counts never go negative
}

TEST(BlockPool, CachedBlocksAreEvictedOnlyWhenNeededOldestFirst) {
  BlockPool pool(4, 16);
  std::vector<BlockId> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(pool.allocate()->block);
  pool.mark_cached(blocks[0]);
  pool.mark_cached(blocks[1]);
  pool.mark_cached(blocks[2]);
  // Freed in the order 2, 0, 1, then one plain block.
  pool.release(blocks[2]);
  pool.release(blocks[0]);
  pool.release(blocks[1]);
  pool.release(blocks[3]);
  EXPECT_EQ(pool.n_free(), 4);
  EXPECT_EQ(pool.n_cached_free(), 3);

  auto a = pool.allocate();  // the plain block goes first: nothing evicted
  EXPECT_EQ(a->block, blocks[3]);
  EXPECT_FALSE(a->evicted);
  EXPECT_EQ(pool.evictions(), 0);

  auto b = pool.allocate();
  EXPECT_EQ(b->block, blocks[2]);  // least recently freed
  EXPECT_TRUE(b->evicted);
  EXPECT_FALSE(pool.is_cached(b->block));
  auto c = pool.allocate();
  EXPECT_EQ(c->block, blocks[0]);
  EXPECT_EQ(pool.evictions(), 2);
}

TEST(BlockPool, AcquiringACachedFreeBlockTakesItOutOfTheLruQueue) {
  BlockPool pool(2, 16);
  BlockId a = pool.allocate()->block;
  BlockId b = pool.allocate()->block;
  pool.mark_cached(a);
  pool.mark_cached(b);
  pool.release(a);
  pool.release(b);
  pool.acquire(a);  // a prefix hit revives it
  EXPECT_EQ(pool.ref_count(a), 1);
  EXPECT_EQ(pool.n_free(), 1);
  auto next = pool.allocate();
  EXPECT_EQ(next->block, b);
  EXPECT_FALSE(pool.allocate());
  pool.release(a);  // back to the LRU queue, at its newest end
  EXPECT_EQ(pool.allocate()->block, a);
}

TEST(BlockPool, AcquireOfAPlainFreeBlockIsAnError) {
  BlockPool pool(1, 16);
  EXPECT_THROW(pool.acquire(0), std::logic_error);
  EXPECT_THROW(pool.acquire(5), std::out_of_range);
}

TEST(BlockPool, WritingASharedBlockGivesAFreshOneToCopyInto) {
  BlockPool pool(3, 16);
  BlockId shared = pool.allocate()->block;
  pool.acquire(shared);
  auto target = pool.prepare_write(shared);
  ASSERT_TRUE(target);
  EXPECT_NE(target->block, shared);
  ASSERT_TRUE(target->copy);
  EXPECT_EQ(target->copy->src, shared);
  EXPECT_EQ(target->copy->dst, target->block);
  EXPECT_EQ(pool.ref_count(shared), 1);
  // The other owner is now alone and writes in place.
  auto in_place = pool.prepare_write(shared);
  EXPECT_EQ(in_place->block, shared);
  EXPECT_FALSE(in_place->copy);
}

TEST(BlockPool, CopyOnWriteFailsCleanlyWhenThePoolIsFull) {
  BlockPool pool(1, 16);
  BlockId shared = pool.allocate()->block;
  pool.acquire(shared);
  EXPECT_FALSE(pool.prepare_write(shared));
  EXPECT_EQ(pool.ref_count(shared), 2);
}

TEST(BlockPool, RandomOperationsKeepTheCountsConsistent) {
  BlockPool pool(32, 16);
  std::mt19937 rng(7);
  std::vector<BlockId> owned;  // one entry per reference we hold
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 4);
    if (op == 0 || owned.empty()) {
      if (auto got = pool.allocate()) owned.push_back(got->block);
    } else if (op == 1) {
      BlockId b = owned[rng() % owned.size()];
      pool.acquire(b);
      owned.push_back(b);
    } else if (op == 2) {
      size_t i = rng() % owned.size();
      if (rng() % 2) pool.mark_cached(owned[i]);
      pool.release(owned[i]);
      owned[i] = owned.back();
      owned.pop_back();
    } else {
      size_t i = rng() % owned.size();
      if (auto t = pool.prepare_write(owned[i])) owned[i] = t->block;
    }
    std::vector<int32_t> expected(32, 0);
    for (BlockId b : owned) ++expected[static_cast<size_t>(b)];
    int32_t used = 0;
    for (BlockId b = 0; b < 32; ++b) {
      ASSERT_EQ(pool.ref_count(b), expected[static_cast<size_t>(b)]);
      used += expected[static_cast<size_t>(b)] > 0;
    }
    ASSERT_EQ(pool.n_used(), used);
  }
  for (BlockId b : owned) pool.release(b);
  EXPECT_EQ(pool.n_free(), 32);
}

}  // namespace
}  // namespace ridge
