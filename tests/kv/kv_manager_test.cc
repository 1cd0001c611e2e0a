#include "kv/kv_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <vector>

namespace ridge {
namespace {

std::vector<int32_t> iota_tokens(int n, int32_t start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

KvManager make(int32_t n_blocks, int32_t block_size = 4, bool prefix = true) {
  return KvManager(KvConfig{n_blocks, block_size, prefix});
}

TEST(KvManager, AllocatesWholeBlocksAsTokensArrive) {
  KvManager kv = make(8);
  EXPECT_TRUE(kv.allocate_for(1, 5).ok);  // 5 tokens: 2 blocks
  EXPECT_EQ(kv.block_table(1).size(), 2u);
  EXPECT_TRUE(kv.allocate_for(1, 3).ok);  // fills block 2 exactly
  EXPECT_EQ(kv.block_table(1).size(), 2u);
  EXPECT_TRUE(kv.allocate_for(1, 1).ok);
  EXPECT_EQ(kv.block_table(1).size(), 3u);
  EXPECT_EQ(kv.n_slots(1), 9);
  EXPECT_EQ(kv.n_used_blocks(), 3);
  kv.free(1);
  EXPECT_EQ(kv.n_free_blocks(), 8);
}

TEST(KvManager, FailsWithoutSideEffectsWhenThePoolIsShort) {
  KvManager kv = make(3);
  ASSERT_TRUE(kv.allocate_for(1, 8).ok);
  auto before = std::vector<BlockId>(kv.block_table(1).begin(), kv.block_table(1).end());
  EXPECT_FALSE(kv.allocate_for(1, 5).ok);  // needs 2 more, 1 free
  EXPECT_EQ(std::vector<BlockId>(kv.block_table(1).begin(), kv.block_table(1).end()), before);
  EXPECT_EQ(kv.n_slots(1), 8);
  EXPECT_EQ(kv.n_free_blocks(), 1);
}

TEST(KvManager, PrefixReuseSkipsTheCachedPart) {
  KvManager kv = make(16);
  std::vector<int32_t> system = iota_tokens(12);  // 3 full blocks
  std::vector<int32_t> a = system;
  a.insert(a.end(), {100, 101});
  ASSERT_EQ(kv.match_prefix(1, a), 0);
  ASSERT_TRUE(kv.allocate_for(1, static_cast<int64_t>(a.size())).ok);
  kv.cache_full_blocks(1, a, static_cast<int64_t>(a.size()));

  std::vector<int32_t> b = system;
  b.insert(b.end(), {200, 201, 202});
  EXPECT_EQ(kv.match_prefix(2, b), 12);
  auto shared = kv.block_table(2);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(shared[i], kv.block_table(1)[i]);
  EXPECT_TRUE(kv.allocate_for(2, 3).ok);  // only the new tokens need slots
  EXPECT_EQ(kv.block_table(2).size(), 4u);
  EXPECT_EQ(kv.pool().ref_count(shared[0]), 2);
  EXPECT_EQ(kv.prefix_hit_tokens(), 12);
}

TEST(KvManager, AFullyCachedPromptStillComputesItsLastToken) {
  KvManager kv = make(8);
  std::vector<int32_t> p = iota_tokens(8);
  kv.match_prefix(1, p);
  ASSERT_TRUE(kv.allocate_for(1, 8).ok);
  kv.cache_full_blocks(1, p, 8);
  kv.free(1);
  EXPECT_EQ(kv.match_prefix(2, p), 4);  // the second block is recomputed for the last token's logits
}

TEST(KvManager, FreedPrefixSurvivesUntilSpaceIsNeeded) {
  KvManager kv = make(4);
  std::vector<int32_t> p = iota_tokens(9);
  kv.match_prefix(1, p);
  ASSERT_TRUE(kv.allocate_for(1, 9).ok);
  kv.cache_full_blocks(1, p, 9);
  kv.free(1);
  EXPECT_EQ(kv.n_free_blocks(), 4);
  EXPECT_EQ(kv.evictions(), 0);

  ASSERT_TRUE(kv.allocate_for(7, 8).ok);  // two plain free blocks exist: no eviction yet
  EXPECT_EQ(kv.evictions(), 0);
  EXPECT_EQ(kv.match_prefix(2, p), 8);  // still cached
  kv.free(2);
  ASSERT_TRUE(kv.allocate_for(7, 4).ok);  // now a cached block must go: the tail one first
  EXPECT_EQ(kv.evictions(), 1);
  EXPECT_EQ(kv.match_prefix(3, p), 4);
}

TEST(KvManager, CopyOnWriteWhenForkedSequencesShareAPartialBlock) {
  KvManager kv = make(8);
  ASSERT_TRUE(kv.allocate_for(1, 6).ok);  // block 0 full, block 1 holds 2 of 4
  kv.fork(1, 2);
  EXPECT_EQ(kv.n_used_blocks(), 2);
  BlockId partial = kv.block_table(1)[1];

  auto child = kv.allocate_for(2, 1);  // the child writes into the shared partial block
  ASSERT_TRUE(child.ok);
  ASSERT_EQ(child.copies.size(), 1u);
  EXPECT_EQ(child.copies[0].src, partial);
  EXPECT_EQ(child.copies[0].dst, kv.block_table(2)[1]);
  EXPECT_NE(kv.block_table(2)[1], partial);
  EXPECT_EQ(kv.block_table(2)[0], kv.block_table(1)[0]);  // the full block stays shared

  auto parent = kv.allocate_for(1, 1);  // the parent is alone now and writes in place
  EXPECT_TRUE(parent.copies.empty());
  EXPECT_EQ(kv.block_table(1)[1], partial);
  kv.free(1);
  kv.free(2);
  EXPECT_EQ(kv.n_free_blocks(), 8);
}

TEST(KvManager, ForkAtABlockBoundaryNeedsNoCopy) {
  KvManager kv = make(8);
  ASSERT_TRUE(kv.allocate_for(1, 4).ok);
  kv.fork(1, 2);
  auto child = kv.allocate_for(2, 1);
  EXPECT_TRUE(child.copies.empty());
  EXPECT_EQ(kv.n_used_blocks(), 2);
}

// Random appends, forks, prefix hits and frees: a block's count always equals the number of tables
// holding it, a block about to be written has one owner, and at the end every block is free.
TEST(KvManager, RandomForksAndPrefixHitsKeepCountsExact) {
  KvManager kv = make(40, 4);
  std::mt19937 rng(99);
  std::map<SeqId, std::vector<int32_t>> seqs;  // the tokens each sequence has slots for
  SeqId next = 0;
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 4);
    if (op == 0 || seqs.empty()) {  // a new sequence, maybe sharing a prefix with a common one
      std::vector<int32_t> tokens = iota_tokens(static_cast<int>(rng() % 3) * 4, 0);
      for (int t = 1 + static_cast<int>(rng() % 10); t > 0; --t) tokens.push_back(static_cast<int32_t>(rng() % 3));
      SeqId id = next++;
      int64_t hit = kv.match_prefix(id, tokens);
      ASSERT_EQ(hit % 4, 0);
      if (!kv.allocate_for(id, static_cast<int64_t>(tokens.size()) - hit).ok) {
        kv.free(id);
        continue;
      }
      kv.cache_full_blocks(id, tokens, static_cast<int64_t>(tokens.size()));
      seqs[id] = tokens;
    } else if (op == 1) {  // append tokens
      auto it = std::next(seqs.begin(), static_cast<long>(rng() % seqs.size()));
      int64_t before = kv.n_slots(it->first);
      int64_t n = 1 + static_cast<int64_t>(rng() % 6);
      KvManager::Allocation a = kv.allocate_for(it->first, n);
      if (!a.ok) continue;
      for (int64_t i = 0; i < n; ++i) it->second.push_back(static_cast<int32_t>(rng() % 3));
      auto table = kv.block_table(it->first);
      for (int64_t pos = before; pos < before + n; ++pos)
        ASSERT_EQ(kv.pool().ref_count(table[static_cast<size_t>(pos / 4)]), 1) << "writing a shared block";
      kv.cache_full_blocks(it->first, it->second, kv.n_slots(it->first));
    } else if (op == 2) {  // fork
      auto it = std::next(seqs.begin(), static_cast<long>(rng() % seqs.size()));
      SeqId child = next++;
      kv.fork(it->first, child);
      seqs[child] = it->second;
    } else {
      auto it = std::next(seqs.begin(), static_cast<long>(rng() % seqs.size()));
      kv.free(it->first);
      seqs.erase(it);
    }
    std::vector<int32_t> owners(40, 0);
    for (const auto& [id, tokens] : seqs) {
      ASSERT_EQ(kv.n_slots(id), static_cast<int64_t>(tokens.size()));
      for (BlockId b : kv.block_table(id)) ++owners[static_cast<size_t>(b)];
    }
    for (BlockId b = 0; b < 40; ++b) ASSERT_EQ(kv.pool().ref_count(b), owners[static_cast<size_t>(b)]);
  }
  for (const auto& entry : seqs) kv.free(entry.first);
  EXPECT_EQ(kv.n_free_blocks(), 40);
  EXPECT_GT(kv.prefix_hit_tokens(), 0);
  EXPECT_GT(kv.evictions(), 0);
}

TEST(KvManager, MemoryPlanCountsBlocksTokensAndSequences) {
  // SmolLM2-135M-like: 30 layers, 3 kv heads x 64 dims, f16 K and V: 768 bytes per token per layer.
  KvMemoryPlan plan = plan_kv_memory({.bytes_per_token_per_layer = 768, .n_layer = 30,
                                      .budget_bytes = int64_t{1} << 30, .block_size = 16, .max_context = 8192});
  EXPECT_EQ(plan.bytes_per_token, 23040);
  EXPECT_EQ(plan.bytes_per_block, 368640);
  EXPECT_EQ(plan.n_blocks, (int64_t{1} << 30) / 368640);
  EXPECT_EQ(plan.n_tokens, plan.n_blocks * int64_t{16});
  EXPECT_EQ(plan.full_context_seqs, plan.n_blocks / 512);
  KvMemoryPlan tiny = plan_kv_memory({.bytes_per_token_per_layer = 768, .n_layer = 30,
                                      .budget_bytes = 1 << 20, .block_size = 16, .max_context = 8192});
  EXPECT_EQ(tiny.full_context_seqs, 0);  // the caller reports this as an error
}

}  // namespace
}  // namespace ridge
