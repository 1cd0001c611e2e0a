#include "kv/kv_tiers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/error.h"
#include "kv/prefix_cache.h"

namespace ridge {
namespace {
namespace fs = std::filesystem;

constexpr int32_t kBlockSize = 4;
constexpr int64_t kBlockBytes = 1000;  // not a multiple of 32: the checksum's tail is exercised too
const std::string kModel = "model-a kv layers=2";

// Block i of one long prompt: its tokens, payload and chained key.
struct TestBlock {
  uint64_t hash, parent;
  std::vector<int32_t> tokens;
  std::vector<uint8_t> payload;
};

std::vector<TestBlock> make_chain(int n, int32_t first_token = 0) {
  std::vector<TestBlock> chain;
  uint64_t parent = PrefixCache::kNoParent;
  for (int i = 0; i < n; ++i) {
    TestBlock b;
    for (int32_t t = 0; t < kBlockSize; ++t) b.tokens.push_back(first_token + i * kBlockSize + t);
    std::mt19937 rng(uint32_t(first_token * 7919 + i));
    for (int64_t j = 0; j < kBlockBytes; ++j) b.payload.push_back(uint8_t(rng()));
    b.parent = parent;
    b.hash = parent = PrefixCache::chain_hash(parent, b.tokens);
    chain.push_back(std::move(b));
  }
  return chain;
}

int64_t file_bytes(const std::string& identity = kModel) { return KvBlockFormat(identity, kBlockSize, kBlockBytes).file_bytes(); }

class KvTiersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ridge-kv-tiers-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  KvTierConfig config(int64_t ram_blocks, int64_t disk_bytes, const std::string& identity = kModel) const {
    KvTierConfig c;
    c.ram_bytes = ram_blocks * kBlockBytes;
    c.disk_dir = disk_bytes > 0 ? dir_.string() : "";
    c.disk_bytes = disk_bytes;
    c.model_identity = identity;
    c.block_bytes = kBlockBytes;
    c.block_size = kBlockSize;
    return c;
  }
  fs::path path_of(uint64_t hash) const { return dir_ / fmt::format("{:02x}", hash >> 56) / fmt::format("{:016x}.kvb", hash); }
  // The block files under the directory and their sizes summed.
  std::pair<int64_t, int64_t> files_on_disk() const {
    int64_t n = 0, bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file() && e.path().extension() == ".kvb") ++n, bytes += int64_t(e.file_size());
    return {n, bytes};
  }

  static void put(KvTiers& tiers, const TestBlock& b) { tiers.put(b.hash, b.parent, b.tokens, b.payload); }
  static bool contains(const KvTiers& tiers, const TestBlock& b) { return tiers.contains(b.hash, b.parent, b.tokens); }
  // Whether the block loads back byte for byte.
  static bool loads(KvTiers& tiers, const TestBlock& b) {
    std::vector<uint8_t> out(size_t(kBlockBytes), 0xee);
    return tiers.load(b.hash, b.parent, b.tokens, out) && out == b.payload;
  }

  fs::path dir_;
};

TEST_F(KvTiersTest, RamHitServesTheBytesPut) {
  KvTiers tiers(config(4, 0));
  const auto chain = make_chain(3);
  for (const auto& b : chain) put(tiers, b);
  for (const auto& b : chain) {
    EXPECT_TRUE(contains(tiers, b));
    EXPECT_TRUE(loads(tiers, b));
  }
  EXPECT_FALSE(loads(tiers, make_chain(1, 999)[0]));
  const KvTiers::Stats s = tiers.stats();
  EXPECT_EQ(s.ram_blocks, 3);
  EXPECT_EQ(s.ram_bytes, 3 * kBlockBytes);
  EXPECT_EQ(s.ram_hits, 3);
  EXPECT_EQ(s.misses, 1);
  EXPECT_FALSE(fs::exists(dir_));  // no disk tier, no directory
}

TEST_F(KvTiersTest, RamIsAnLruWithoutADisk) {
  KvTiers tiers(config(2, 0));
  const auto chain = make_chain(3);
  put(tiers, chain[0]);
  put(tiers, chain[1]);
  EXPECT_TRUE(loads(tiers, chain[0]));  // block 1 is now the least recently used
  put(tiers, chain[2]);
  EXPECT_TRUE(contains(tiers, chain[0]));
  EXPECT_FALSE(contains(tiers, chain[1]));
  EXPECT_TRUE(contains(tiers, chain[2]));
  EXPECT_EQ(tiers.stats().ram_evictions, 1);
}

TEST_F(KvTiersTest, RamOverflowGoesToDiskAndLoadsBackByteIdentical) {
  KvTiers tiers(config(2, 10 * file_bytes()));
  const auto chain = make_chain(5);
  for (const auto& b : chain) put(tiers, b);
  tiers.flush();
  KvTiers::Stats s = tiers.stats();
  EXPECT_EQ(s.ram_blocks, 2);
  EXPECT_EQ(s.disk_blocks, 3);
  EXPECT_EQ(s.ram_evictions, 3);
  EXPECT_EQ(s.disk_writes, 3);
  EXPECT_EQ(s.queued_blocks, 0);
  EXPECT_EQ(files_on_disk(), std::make_pair(int64_t(3), 3 * file_bytes()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(fs::is_regular_file(path_of(chain[size_t(i)].hash))) << i;
  for (const auto& b : chain) EXPECT_TRUE(loads(tiers, b));
  s = tiers.stats();
  EXPECT_EQ(s.disk_hits, 3);
  EXPECT_EQ(s.ram_hits, 2);
}

TEST_F(KvTiersTest, DiskBudgetIsNeverExceededAndEvictsTheLeastRecentlyUsed) {
  const int64_t budget = 3 * file_bytes() + file_bytes() / 2;
  KvTiers tiers(config(0, budget));  // no RAM tier: blocks go straight to the disk writer
  const auto chain = make_chain(8);
  for (int i = 0; i < 3; ++i) put(tiers, chain[size_t(i)]);
  tiers.flush();
  EXPECT_TRUE(loads(tiers, chain[0]));  // block 1 is now the least recently used
  put(tiers, chain[3]);
  tiers.flush();
  EXPECT_TRUE(contains(tiers, chain[0]));
  EXPECT_FALSE(contains(tiers, chain[1]));
  EXPECT_FALSE(fs::exists(path_of(chain[1].hash)));
  EXPECT_TRUE(contains(tiers, chain[2]));
  EXPECT_TRUE(contains(tiers, chain[3]));
  for (size_t i = 4; i < chain.size(); ++i) {
    put(tiers, chain[i]);
    tiers.flush();
    EXPECT_LE(files_on_disk().second, budget);
    EXPECT_EQ(files_on_disk().second, tiers.stats().disk_bytes);
  }
  const KvTiers::Stats s = tiers.stats();
  EXPECT_EQ(s.disk_blocks, 3);
  EXPECT_EQ(s.disk_writes, 8);
  EXPECT_EQ(s.disk_evictions, 5);
  for (size_t i = 5; i < chain.size(); ++i) EXPECT_TRUE(loads(tiers, chain[i]));
}

TEST_F(KvTiersTest, ABlockLargerThanABudgetIsNotKeptThere) {
  {
    KvTierConfig c = config(0, 10 * file_bytes());
    c.ram_bytes = kBlockBytes - 1;  // too small for one block: straight to disk
    KvTiers tiers(c);
    const auto b = make_chain(1)[0];
    put(tiers, b);
    tiers.flush();
    EXPECT_EQ(tiers.stats().ram_blocks, 0);
    EXPECT_EQ(tiers.stats().disk_blocks, 1);
    EXPECT_TRUE(loads(tiers, b));
  }
  fs::remove_all(dir_);
  KvTiers tiers(config(0, file_bytes() - 1));  // a file would not fit: nothing is written, nothing fails
  put(tiers, make_chain(1)[0]);
  tiers.flush();
  EXPECT_EQ(tiers.stats().disk_writes, 0);
  EXPECT_EQ(files_on_disk().first, 0);
}

TEST_F(KvTiersTest, ARestartServesTheDiskBlocksAndTrimsToANewBudget) {
  const auto chain = make_chain(4);
  {
    KvTiers tiers(config(1, 10 * file_bytes()));
    for (const auto& b : chain) put(tiers, b);
  }  // the destructor finishes the writes; block 3 was still in RAM and is gone
  {
    KvTiers tiers(config(1, 10 * file_bytes()));
    EXPECT_EQ(tiers.stats().disk_blocks, 3);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(loads(tiers, chain[size_t(i)])) << i;
    EXPECT_FALSE(contains(tiers, chain[3]));
    EXPECT_EQ(tiers.stats().disk_hits, 3);
  }
  // Recency across a restart is the files' write time: make block 1 the newest, block 0 the oldest.
  const auto now = fs::file_time_type::clock::now();
  for (int i : {0, 2, 1}) fs::last_write_time(path_of(chain[size_t(i)].hash), now + std::chrono::seconds(i == 1 ? 3 : i));
  KvTiers tiers(config(1, 2 * file_bytes()));
  EXPECT_EQ(tiers.stats().disk_blocks, 2);
  EXPECT_EQ(tiers.stats().disk_evictions, 1);
  EXPECT_FALSE(contains(tiers, chain[0]));
  EXPECT_FALSE(fs::exists(path_of(chain[0].hash)));
  EXPECT_TRUE(loads(tiers, chain[1]));
  EXPECT_TRUE(loads(tiers, chain[2]));
}

void flip_byte(const fs::path& path, int64_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  const char c = char(f.get());
  f.seekp(at);
  f.put(char(c ^ 0x10));
}

TEST_F(KvTiersTest, AFlippedByteIsDeletedCountedAndNeverServed) {
  const int64_t header = KvBlockFormat(kModel, kBlockSize, kBlockBytes).header_bytes();
  // A token id in the header, a payload byte, the checksum's last byte.
  const std::vector<int64_t> where = {48 + int64_t(kModel.size()), header + 517, file_bytes() - 1};
  const auto chain = make_chain(int(where.size()));
  KvTiers tiers(config(0, 10 * file_bytes()));
  for (const auto& b : chain) put(tiers, b);
  tiers.flush();
  for (size_t i = 0; i < where.size(); ++i) {
    flip_byte(path_of(chain[i].hash), where[i]);
    EXPECT_TRUE(contains(tiers, chain[i]));  // the index does not know yet
    EXPECT_FALSE(loads(tiers, chain[i])) << where[i];
    EXPECT_FALSE(fs::exists(path_of(chain[i].hash)));
    EXPECT_FALSE(contains(tiers, chain[i]));
    EXPECT_EQ(tiers.stats().corrupt_files, int64_t(i) + 1);
  }
  EXPECT_EQ(tiers.stats().disk_blocks, 0);
  EXPECT_EQ(tiers.stats().disk_bytes, 0);
  EXPECT_EQ(tiers.stats().misses, int64_t(where.size()));
}

TEST_F(KvTiersTest, ATruncatedFileIsDeletedCountedAndNeverServed) {
  const auto chain = make_chain(3);
  {
    KvTiers tiers(config(0, 10 * file_bytes()));
    for (const auto& b : chain) put(tiers, b);
    tiers.flush();
    fs::resize_file(path_of(chain[0].hash), uint64_t(file_bytes() - 1));
    fs::resize_file(path_of(chain[1].hash), 0);
    for (int i = 0; i < 2; ++i) {
      EXPECT_FALSE(loads(tiers, chain[size_t(i)]));
      EXPECT_FALSE(fs::exists(path_of(chain[size_t(i)].hash)));
    }
    EXPECT_EQ(tiers.stats().corrupt_files, 2);
    EXPECT_TRUE(loads(tiers, chain[2]));
  }
  // Found at start-up instead: the header check (size first) drops it before anything asks.
  fs::resize_file(path_of(chain[2].hash), uint64_t(file_bytes() / 2));
  KvTiers tiers(config(0, 10 * file_bytes()));
  EXPECT_EQ(tiers.stats().corrupt_files, 1);
  EXPECT_EQ(tiers.stats().disk_blocks, 0);
  EXPECT_FALSE(fs::exists(path_of(chain[2].hash)));
}

TEST_F(KvTiersTest, FilesOfAnotherModelOrLayoutAreNeverServed) {
  const auto chain = make_chain(2);
  {
    KvTiers tiers(config(0, 10 * file_bytes("model-b"), "model-b"));
    for (const auto& b : chain) put(tiers, b);
  }
  {
    KvTiers tiers(config(0, 10 * file_bytes("model-bb"), "model-bb"));  // another identity, files of the same size
    EXPECT_FALSE(contains(tiers, chain[0]));
    EXPECT_FALSE(loads(tiers, chain[0]));
    EXPECT_EQ(tiers.stats().corrupt_files, 2);
    EXPECT_EQ(files_on_disk().first, 0);
    put(tiers, chain[0]);
  }
  KvTierConfig other_layout = config(0, 10 * file_bytes("model-bb"), "model-bb");
  other_layout.block_bytes = kBlockBytes + 4;
  KvTiers tiers(other_layout);
  EXPECT_EQ(tiers.stats().corrupt_files, 1);
  EXPECT_FALSE(contains(tiers, chain[0]));
}

TEST_F(KvTiersTest, AnotherPrefixUnderTheSameHashIsAMiss) {
  const auto chain = make_chain(2);
  const TestBlock& b = chain[1];
  std::vector<int32_t> other_tokens = b.tokens;
  other_tokens[2] += 1;
  std::vector<uint8_t> out(static_cast<size_t>(kBlockBytes));
  for (int64_t ram_blocks : {4, 0}) {  // held in RAM, then on disk
    fs::remove_all(dir_);
    KvTiers tiers(config(ram_blocks, 10 * file_bytes()));
    put(tiers, b);
    tiers.flush();
    EXPECT_FALSE(tiers.contains(b.hash, b.parent, other_tokens));
    EXPECT_FALSE(tiers.contains(b.hash, b.parent + 1, b.tokens));
    EXPECT_FALSE(tiers.contains(b.hash, b.parent, std::span(b.tokens).first(2)));
    EXPECT_FALSE(tiers.load(b.hash, b.parent, other_tokens, out));
    EXPECT_FALSE(tiers.load(b.hash, b.parent + 1, b.tokens, out));
    EXPECT_EQ(tiers.stats().misses, 2);
    EXPECT_EQ(tiers.stats().corrupt_files, 0);  // a miss, not a bad file
    // A block of another prefix put under that hash replaces it.
    std::vector<uint8_t> other_payload(size_t(kBlockBytes), 7);
    tiers.put(b.hash, b.parent, other_tokens, other_payload);
    tiers.flush();
    EXPECT_TRUE(tiers.load(b.hash, b.parent, other_tokens, out));
    EXPECT_EQ(out, other_payload);
    EXPECT_FALSE(contains(tiers, b));
  }
}

TEST_F(KvTiersTest, HostileDirectoryContentIsNeverServedAndNeverCrashes) {
  const auto chain = make_chain(3);
  {
    KvTiers tiers(config(0, 10 * file_bytes()));
    for (const auto& b : chain) put(tiers, b);
  }
  const auto write_file = [](const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; };
  const fs::path bucket = path_of(chain[0].hash).parent_path();
  // Ours, and bad: a valid file under another hash's name (same bucket), one in the wrong bucket,
  // zero length, wrong magic at the right size, a link, a directory, an interrupted write.
  const auto in_bucket = [&](uint64_t low) { return (chain[0].hash & 0xff00000000000000ULL) | low; };
  const auto name = [&](uint64_t low) { return fmt::format("{:016x}.kvb", in_bucket(low)); };
  const uint64_t other = in_bucket(0x1234);
  fs::rename(path_of(chain[1].hash), path_of(other));
  const uint64_t moved = chain[2].hash ^ 0x0100000000000000ULL;
  fs::create_directories(path_of(moved).parent_path());
  fs::rename(path_of(chain[2].hash), path_of(moved).parent_path() / path_of(chain[2].hash).filename());
  write_file(bucket / name(0xaa), "");
  write_file(bucket / name(0xbb), std::string(size_t(file_bytes()), 'x'));
  fs::create_symlink(path_of(chain[0].hash), bucket / name(0xcc));
  fs::create_directories(bucket / name(0xdd) / "inside");
  write_file(bucket / (name(0xee) + ".tmp"), "half");
  // Not ours: left alone.
  write_file(dir_ / "notes.txt", "keep");
  write_file(dir_ / "zz", "keep");
  write_file(bucket / "README", "keep");

  KvTiers tiers(config(0, 10 * file_bytes()));
  const KvTiers::Stats s = tiers.stats();
  EXPECT_EQ(s.corrupt_files, 6);
  EXPECT_EQ(s.disk_blocks, 1);
  EXPECT_TRUE(loads(tiers, chain[0]));
  EXPECT_FALSE(contains(tiers, chain[1]));
  EXPECT_FALSE(contains(tiers, chain[2]));
  for (const std::string& gone : {name(0xaa), name(0xbb), name(0xcc), name(0xee) + ".tmp"})
    EXPECT_FALSE(fs::exists(fs::symlink_status(bucket / gone))) << gone;
  EXPECT_FALSE(fs::exists(path_of(other)));
  EXPECT_FALSE(fs::exists(path_of(moved).parent_path() / path_of(chain[2].hash).filename()));
  EXPECT_TRUE(fs::exists(bucket / name(0xdd) / "inside"));  // not emptied for us
  for (const fs::path& p : {dir_ / "notes.txt", dir_ / "zz", bucket / "README"}) EXPECT_TRUE(fs::exists(p)) << p;

  // A directory where a block's file should go: that write fails, the put does not.
  const TestBlock extra = make_chain(1, 500)[0];
  fs::create_directories(path_of(extra.hash) / "x");
  put(tiers, extra);
  tiers.flush();
  EXPECT_EQ(tiers.stats().disk_write_failures, 1);
  EXPECT_FALSE(contains(tiers, extra));
  EXPECT_FALSE(fs::exists(path_of(extra.hash).string() + ".tmp"));
}

TEST_F(KvTiersTest, ADirectoryServesOneKvTiersAtATime) {
  KvTiers tiers(config(0, 10 * file_bytes()));
  EXPECT_THROW(KvTiers second(config(0, 10 * file_bytes())), Error);
}

TEST_F(KvTiersTest, ConcurrentLoadsWhilePutsEvictToDisk) {
  KvTierConfig c = config(4, 24 * file_bytes());
  c.write_queue_bytes = 2 * kBlockBytes;  // small: some evicted blocks are dropped
  KvTiers tiers(c);
  const auto chain = make_chain(300);
  std::atomic<int> published{0};
  std::atomic<int64_t> served{0}, wrong{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> loaders;
  for (int t = 0; t < 3; ++t)
    loaders.emplace_back([&, t] {
      std::mt19937 rng{uint32_t(t)};
      std::vector<uint8_t> out(static_cast<size_t>(kBlockBytes));
      for (int tries = 0; !done.load() || tries < 500; ++tries) {  // some loads even if the puts finish first
        const int n = published.load();
        if (n == 0) {  // nothing to ask for yet: not a try (else a slow start used them all up)
          --tries;
          std::this_thread::yield();
          continue;
        }
        const TestBlock& b = chain[rng() % uint32_t(n)];
        if (tiers.load(b.hash, b.parent, b.tokens, out)) {
          ++served;
          if (out != b.payload) ++wrong;
        }
        tiers.contains(b.hash, b.parent, b.tokens);
      }
    });
  for (int i = 0; i < int(chain.size()); ++i) {
    put(tiers, chain[size_t(i)]);
    published.store(i + 1);
    if (i % 50 == 0) tiers.stats();
  }
  tiers.flush();
  done.store(true);
  for (auto& l : loaders) l.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(served.load(), 0);
  const KvTiers::Stats s = tiers.stats();
  EXPECT_EQ(s.corrupt_files, 0);
  EXPECT_LE(files_on_disk().second, c.disk_bytes);
  EXPECT_EQ(files_on_disk().second, s.disk_bytes);
  EXPECT_EQ(s.disk_writes + s.disk_write_drops, s.ram_evictions);
  int64_t held = 0;
  for (const auto& b : chain)
    if (contains(tiers, b)) {
      EXPECT_TRUE(loads(tiers, b));
      ++held;
    }
  EXPECT_EQ(held, s.ram_blocks + s.disk_blocks);
}

TEST(KvTiersChecksum, EveryFlippedBitAndEveryTruncationChangesIt) {
  std::vector<uint8_t> bytes(203);  // six stripes, a word, a tail
  std::mt19937 rng(1);
  for (auto& b : bytes) b = uint8_t(rng());
  const auto sum = [](std::span<const uint8_t> s) {
    KvChecksum c;
    c.update(s);
    return c.finish();
  };
  const uint64_t whole = sum(bytes);
  KvChecksum split;
  split.update(std::span(bytes).first(64));
  split.update(std::span(bytes).subspan(64));
  EXPECT_EQ(split.finish(), whole);  // updates of whole stripes stream
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= uint8_t(1 << bit);
      EXPECT_NE(sum(bytes), whole) << i << ":" << bit;
      bytes[i] ^= uint8_t(1 << bit);
    }
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_NE(sum(std::span(bytes).first(n)), whole) << n;
  std::vector<uint8_t> zeros(64, 0);
  EXPECT_NE(sum(std::span(zeros).first(63)), sum(zeros));  // zero bytes count too
}

TEST(KvTiersPayload, GatherAndScatterMoveOneBlockOfEveryLayerWithItsScales) {
  KvLayout layout;
  layout.n_layer = 3, layout.n_kv_heads = 2, layout.head_dim = 4, layout.block_size = 4, layout.n_blocks = 6;
  layout.dtype = KvDtype::INT8;
  KvStore a(layout), b(layout);
  ASSERT_EQ(kv_tier_block_bytes(a), layout.n_layer * (a.block_data_bytes() + a.block_scale_bytes()));
  ASSERT_GT(a.block_scale_bytes(), 0);
  std::vector<float> k(size_t(layout.kv_dim())), v(k.size());
  for (int64_t l = 0; l < layout.n_layer; ++l)
    for (int64_t slot = 0; slot < layout.block_size; ++slot) {
      for (size_t i = 0; i < k.size(); ++i) k[i] = float(l * 100 + slot * 10 + int64_t(i)), v[i] = -k[i] * 0.5f;
      a.write(l, 2, slot, k.data(), v.data());
    }
  std::vector<uint8_t> payload(size_t(kv_tier_block_bytes(a)));
  kv_tier_gather(a, 2, payload);
  // Layer 0's data rows come first, the scales of every layer after the data of every layer.
  EXPECT_EQ(0, std::memcmp(payload.data(), a.data_region().base + a.block_data_offset(0, 2), size_t(a.block_data_bytes())));
  EXPECT_EQ(0, std::memcmp(payload.data() + layout.n_layer * a.block_data_bytes(),
                           a.scale_region().base + a.block_scale_offset(0, 2), size_t(a.block_scale_bytes())));
  kv_tier_scatter(b, 5, payload);
  std::vector<uint8_t> again(payload.size());
  kv_tier_gather(b, 5, again);
  EXPECT_EQ(again, payload);
  for (int64_t l = 0; l < layout.n_layer; ++l) {
    EXPECT_EQ(0, std::memcmp(b.data_region().base + b.block_data_offset(l, 5), a.data_region().base + a.block_data_offset(l, 2),
                             size_t(a.block_data_bytes())));
    EXPECT_EQ(0, std::memcmp(b.scale_region().base + b.block_scale_offset(l, 5), a.scale_region().base + a.block_scale_offset(l, 2),
                             size_t(a.block_scale_bytes())));
  }
  EXPECT_THROW(kv_tier_gather(a, 6, payload), Error);
  EXPECT_THROW(kv_tier_scatter(b, 0, std::span(payload).first(10)), Error);
  EXPECT_NE(kv_tier_identity(layout), kv_tier_identity(KvLayout{}));
}

}  // namespace
}  // namespace ridge
