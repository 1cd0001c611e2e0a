#include "kv/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace ridge {
namespace {

std::vector<int32_t> iota_tokens(int n, int32_t start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Caches the full blocks of `tokens` in blocks first_block, first_block + 1, ...
void cache_all(PrefixCache& cache, const std::vector<int32_t>& tokens, int32_t block_size, BlockId first_block) {
  uint64_t h = PrefixCache::kNoParent;
  std::span<const int32_t> all(tokens);
  for (size_t i = 0; i + static_cast<size_t>(block_size) <= tokens.size(); i += static_cast<size_t>(block_size)) {
    auto block = all.subspan(i, static_cast<size_t>(block_size));
    h = PrefixCache::chain_hash(h, block);
    cache.insert(h, block, first_block++);
  }
}

TEST(PrefixCache, HashDependsOnTheWholePrefix) {
  std::vector<int32_t> a = {1, 2, 3, 4};
  uint64_t h1 = PrefixCache::chain_hash(PrefixCache::kNoParent, a);
  uint64_t h2 = PrefixCache::chain_hash(h1, a);
  EXPECT_NE(h1, h2);  // the same tokens after a different prefix
  EXPECT_EQ(h1, PrefixCache::chain_hash(PrefixCache::kNoParent, a));
  std::vector<int32_t> b = {1, 2, 4, 3};
  EXPECT_NE(h1, PrefixCache::chain_hash(PrefixCache::kNoParent, b));
}

TEST(PrefixCache, FindsTheLongestCachedPrefixAndCountsHits) {
  PrefixCache cache(4);
  std::vector<int32_t> cached = iota_tokens(12);  // 3 blocks
  cache_all(cache, cached, 4, 10);

  std::vector<int32_t> query = iota_tokens(10);  // shares 2 full blocks, then diverges
  query.push_back(99);
  query.push_back(98);
  query.push_back(97);
  auto match = cache.longest_prefix(query, static_cast<int64_t>(query.size()));
  EXPECT_EQ(match.blocks, (std::vector<BlockId>{10, 11}));
  EXPECT_EQ(cache.query_tokens(), 12);  // 13 tokens: 3 full blocks looked at
  EXPECT_EQ(cache.hit_tokens(), 8);
}

TEST(PrefixCache, StopsAtTheFirstMissAndRespectsTheTokenLimit) {
  PrefixCache cache(4);
  cache_all(cache, iota_tokens(12), 4, 0);
  std::vector<int32_t> query = iota_tokens(12);
  query[1] = 50;  // first block differs: later blocks cannot match either (chained)
  EXPECT_TRUE(cache.longest_prefix(query, 12).blocks.empty());
  auto limited = cache.longest_prefix(iota_tokens(12), 11);  // leave one token to compute
  EXPECT_EQ(limited.blocks.size(), 2u);
}

TEST(PrefixCache, TokensAreVerifiedOnAHit) {
  PrefixCache cache(2);
  std::vector<int32_t> real = {5, 6};
  std::vector<int32_t> other = {7, 8};
  uint64_t h = PrefixCache::chain_hash(PrefixCache::kNoParent, real);
  ASSERT_TRUE(cache.insert(h, real, 3));
  EXPECT_EQ(cache.find(h, real), 3);
  EXPECT_FALSE(cache.find(h, other));  // a forged collision is a miss
}

TEST(PrefixCache, EvictedBlocksAreForgottenAndDuplicatesRejected) {
  PrefixCache cache(2);
  std::vector<int32_t> t = {1, 2};
  uint64_t h = PrefixCache::chain_hash(PrefixCache::kNoParent, t);
  EXPECT_TRUE(cache.insert(h, t, 0));
  EXPECT_FALSE(cache.insert(h, t, 1));  // the first copy stays
  EXPECT_EQ(cache.size(), 1u);
  cache.erase_block(0);
  EXPECT_FALSE(cache.find(h, t));
  EXPECT_EQ(cache.size(), 0u);
  cache.erase_block(0);  // harmless
}

}  // namespace
}  // namespace ridge
