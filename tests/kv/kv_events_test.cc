// The KV manager's events (kv/kv_events.h): which blocks it reports stored and removed, with their
// exact chained hashes, parents and tokens.
#include <gtest/gtest.h>

#include <numeric>
#include <optional>
#include <vector>

#include "kv/kv_events.h"
#include "kv/kv_manager.h"

namespace ridge {
namespace {

struct Recorded {
  enum Kind { kStored, kRemoved, kCleared } kind;
  std::optional<uint64_t> parent;
  std::vector<uint64_t> hashes;
  std::vector<int32_t> tokens;
  int32_t block_size = 0;
};

class FakeSink : public KvEventSink {
 public:
  std::vector<Recorded> events;
  void on_blocks_stored(std::optional<uint64_t> parent, std::span<const uint64_t> hashes,
                        std::span<const int32_t> tokens, int32_t block_size) override {
    events.push_back({Recorded::kStored, parent, {hashes.begin(), hashes.end()}, {tokens.begin(), tokens.end()}, block_size});
  }
  void on_blocks_removed(std::span<const uint64_t> hashes) override {
    events.push_back({Recorded::kRemoved, std::nullopt, {hashes.begin(), hashes.end()}, {}, 0});
  }
  void on_all_cleared() override { events.push_back({Recorded::kCleared, std::nullopt, {}, {}, 0}); }
};

constexpr int32_t kBs = 4;

std::vector<int32_t> iota_tokens(int n, int32_t start) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::vector<int32_t> slice(const std::vector<int32_t>& v, int from, int to) {
  return std::vector<int32_t>(v.begin() + from, v.begin() + to);
}

// The chained keys of the full blocks of `tokens`, as the prefix cache computes them.
std::vector<uint64_t> chain(const std::vector<int32_t>& tokens) {
  std::vector<uint64_t> hashes;
  uint64_t h = PrefixCache::kNoParent;
  for (size_t i = 0; i + kBs <= tokens.size(); i += kBs) {
    h = PrefixCache::chain_hash(h, std::span<const int32_t>(tokens).subspan(i, kBs));
    hashes.push_back(h);
  }
  return hashes;
}

// Allocates and computes the whole of `tokens` for a new sequence, taking its cached prefix first.
void compute(KvManager& kv, SeqId seq, const std::vector<int32_t>& tokens) {
  const int64_t cached = kv.match_prefix(seq, tokens);
  ASSERT_TRUE(kv.allocate_for(seq, int64_t(tokens.size()) - cached).ok);
  kv.cache_full_blocks(seq, tokens, int64_t(tokens.size()));
}

// A manager whose events are recorded.
struct Watched {
  FakeSink sink;  // outlives kv
  KvManager kv;
  explicit Watched(int32_t n_blocks, bool prefix_caching = true) : kv(KvConfig{n_blocks, kBs, prefix_caching}) {
    kv.set_event_sink(&sink);
  }
};

void expect_stored(const Recorded& e, std::optional<uint64_t> parent, const std::vector<uint64_t>& hashes,
                   const std::vector<int32_t>& tokens) {
  EXPECT_EQ(e.kind, Recorded::kStored);
  EXPECT_EQ(e.parent, parent);
  EXPECT_EQ(e.hashes, hashes);
  EXPECT_EQ(e.tokens, tokens);
  EXPECT_EQ(e.block_size, kBs);
}

void expect_removed(const Recorded& e, const std::vector<uint64_t>& hashes) {
  EXPECT_EQ(e.kind, Recorded::kRemoved);
  EXPECT_EQ(e.hashes, hashes);
}

TEST(KvEvents, StoredBlocksCarryTheirChainAndTokens) {
  Watched w(16);
  const std::vector<int32_t> a = iota_tokens(10, 100);  // two full blocks and two tokens
  const std::vector<uint64_t> h = chain(iota_tokens(12, 100));
  ASSERT_TRUE(w.kv.allocate_for(1, 10).ok);
  w.kv.cache_full_blocks(1, a, 6);  // one full block computed so far
  w.kv.cache_full_blocks(1, a, 10);
  ASSERT_EQ(w.sink.events.size(), 2u);
  expect_stored(w.sink.events[0], std::nullopt, {h[0]}, slice(a, 0, 4));
  expect_stored(w.sink.events[1], h[0], {h[1]}, slice(a, 4, 8));

  w.kv.cache_full_blocks(1, a, 10);  // nothing new: no event
  EXPECT_EQ(w.sink.events.size(), 2u);

  // Decoding two more tokens fills the third block.
  const std::vector<int32_t> longer = iota_tokens(12, 100);
  ASSERT_TRUE(w.kv.allocate_for(1, 2).ok);
  w.kv.cache_full_blocks(1, longer, 12);
  ASSERT_EQ(w.sink.events.size(), 3u);
  expect_stored(w.sink.events[2], h[1], {h[2]}, slice(longer, 8, 12));
}

TEST(KvEvents, ASharedPrefixIsStoredOnceAndTheRestChainsOnIt) {
  Watched w(16);
  std::vector<int32_t> a = iota_tokens(8, 0);  // the shared two blocks
  a.insert(a.end(), {50, 51, 52, 53, 54});
  std::vector<int32_t> b = iota_tokens(8, 0);
  b.insert(b.end(), {60, 61, 62, 63, 64, 65, 66, 67, 68});
  compute(w.kv, 1, a);
  compute(w.kv, 2, b);  // takes the first two blocks from the cache
  const std::vector<uint64_t> ha = chain(a), hb = chain(b);
  ASSERT_EQ(ha[1], hb[1]);
  ASSERT_EQ(w.sink.events.size(), 2u);
  expect_stored(w.sink.events[0], std::nullopt, ha, slice(a, 0, 12));  // one event for all three blocks of a
  expect_stored(w.sink.events[1], hb[1], {hb[2], hb[3]}, slice(b, 8, 16));  // b's own, under the shared prefix
}

TEST(KvEvents, ABlockAlreadyCachedByAnotherSequenceSplitsTheEvent) {
  Watched w(16);
  const std::vector<int32_t> first = iota_tokens(8, 0);
  std::vector<int32_t> second = iota_tokens(4, 0);  // same first block, computed at the same time
  second.insert(second.end(), {70, 71, 72, 73});
  ASSERT_TRUE(w.kv.allocate_for(1, 8).ok);
  ASSERT_TRUE(w.kv.allocate_for(2, 8).ok);
  w.kv.cache_full_blocks(1, first, 8);
  w.kv.cache_full_blocks(2, second, 8);  // its first block duplicates a cached key: a private copy
  const std::vector<uint64_t> h2 = chain(second);
  ASSERT_EQ(w.sink.events.size(), 2u);
  expect_stored(w.sink.events[1], h2[0], {h2[1]}, slice(second, 4, 8));
}

TEST(KvEvents, EvictedBlocksAreRemovedLeastRecentlyUsedFirst) {
  Watched w(4);
  const std::vector<int32_t> a = iota_tokens(8, 0);
  compute(w.kv, 1, a);
  w.kv.free(1);  // two cached free blocks: tail first into the LRU queue
  const std::vector<uint64_t> ha = chain(a);
  w.sink.events.clear();
  ASSERT_TRUE(w.kv.allocate_for(2, 12).ok);  // two plain free blocks, then one eviction
  ASSERT_EQ(w.sink.events.size(), 1u);
  expect_removed(w.sink.events[0], {ha[1]});
  ASSERT_TRUE(w.kv.allocate_for(2, 4).ok);
  ASSERT_EQ(w.sink.events.size(), 2u);
  expect_removed(w.sink.events[1], {ha[0]});
  EXPECT_EQ(w.kv.evictions(), 2);
}

TEST(KvEvents, ACopyOnWriteIntoAnEvictedBlockRemovesIt) {
  Watched w(3);
  const std::vector<int32_t> a = iota_tokens(4, 0);
  compute(w.kv, 1, a);
  w.kv.free(1);                              // block of a: cached, free
  ASSERT_TRUE(w.kv.allocate_for(2, 2).ok);   // a partial block
  w.kv.fork(2, 3);                           // shared by 2 and 3
  ASSERT_TRUE(w.kv.allocate_for(4, 1).ok);   // takes the last plain block
  w.sink.events.clear();
  KvManager::Allocation alloc = w.kv.allocate_for(3, 1);  // copy-on-write: only a's block is left
  ASSERT_TRUE(alloc.ok);
  ASSERT_EQ(alloc.copies.size(), 1u);
  ASSERT_EQ(w.sink.events.size(), 1u);
  expect_removed(w.sink.events[0], chain(a));
}

TEST(KvEvents, NothingIsReportedWithoutPrefixCachingOrAfterTheSinkIsCleared) {
  Watched off(8, /*prefix_caching=*/false);
  compute(off.kv, 1, iota_tokens(8, 0));
  EXPECT_TRUE(off.sink.events.empty());

  Watched cleared(8);
  cleared.kv.set_event_sink(nullptr);
  compute(cleared.kv, 1, iota_tokens(8, 0));
  EXPECT_TRUE(cleared.sink.events.empty());
}

}  // namespace
}  // namespace ridge
