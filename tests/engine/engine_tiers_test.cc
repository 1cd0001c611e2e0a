// The tiered KV cache in the engine: prefix blocks evicted from a small pool go to RAM or disk and
// a later request with that prefix loads them back instead of computing them, with exactly the
// tokens and log-probabilities it would have computed; the disk tier serves after a restart, and a
// corrupted file is never served (the prompt is computed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/engine.h"
#include "engine_test_support.h"
#include "kv/kv_tiers.h"
#include "model/kv_shape.h"

namespace ridge {
namespace {

using testing_support::Output;
namespace fs = std::filesystem;

class EngineTiersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tiny_ = testing_support::make_tiny_model("tiers_test", 3).release();
    model_ = &tiny_->model;
    tokenizer_ = &tiny_->tokenizer;
  }
  static void TearDownTestSuite() { delete tiny_; }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tiers_test_dir_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::shared_ptr<KvTiers> tiers(int64_t ram, const std::string& dir) {
    const KvLayout layout = kv_layout_of(model_->spec, 16, 1, KvDtype::F16);
    KvTierConfig t;
    t.ram_bytes = ram;
    t.disk_dir = dir;
    t.disk_bytes = dir.empty() ? 0 : int64_t(64) << 20;
    t.model_identity = "tiny/" + kv_tier_identity(layout);
    t.block_bytes = layout.bytes_per_token_per_layer() * layout.n_layer * 16;
    return std::make_shared<KvTiers>(t);
  }
  static EngineConfig config(std::shared_ptr<KvTiers> t) {
    EngineConfig c;
    c.n_threads = 1;
    c.n_ctx = 256;
    c.kv_memory_bytes = 24 * 16 * 384;  // 24 blocks: the evicting prompts push the first one's blocks out
    c.max_batched_tokens = 64;
    c.kv_tiers = std::move(t);
    return c;
  }
  // The request under test, then three others that evict its blocks from the pool.
  static std::vector<RequestOptions> evicting() {
    std::vector<RequestOptions> r;
    for (uint32_t seed : {11u, 12u, 13u}) r.push_back(testing_support::greedy_request(testing_support::random_prompt(seed, 150), 8));
    return r;
  }
  static RequestOptions subject() { return testing_support::greedy_request(testing_support::random_prompt(10, 100), 8); }

  fs::path dir_;
  static inline testing_support::TinyModel* tiny_ = nullptr;
  static inline Model* model_ = nullptr;
  static inline Tokenizer* tokenizer_ = nullptr;
};

TEST_F(EngineTiersTest, AnEvictedPrefixComesBackFromRamExactly) {
  const Output want = testing_support::run_alone(*model_, *tokenizer_, subject(), 256);
  Engine engine(*model_, *tokenizer_, config(tiers(1 << 20, "")));
  EXPECT_EQ(testing_support::run_through(engine, {subject()})[0], want);
  for (const RequestOptions& r : evicting()) testing_support::run_through(engine, {r});
  EngineStats s = engine.stats();
  EXPECT_GT(s.tier_blocks_offloaded, 0);
  const Output again = testing_support::run_through(engine, {subject()})[0];
  EXPECT_EQ(again, want);
  s = engine.stats();
  EXPECT_EQ(s.tier_loads, 1);
  EXPECT_EQ(s.tier_load_failures, 0);
  EXPECT_GE(s.tier_tokens_loaded, 16);
  EXPECT_GT(s.tier.ram_hits, 0);
  EXPECT_EQ(again.cached, 96);  // the prompt's six full blocks (100 tokens), from the pool or the tier
  EXPECT_EQ(s.kv_blocks_used, 0);
}

TEST_F(EngineTiersTest, TheDiskTierServesAfterARestartAndNeverServesACorruptFile) {
  const Output want = testing_support::run_alone(*model_, *tokenizer_, subject(), 256);
  {
    Engine engine(*model_, *tokenizer_, config(tiers(0, dir_.string())));
    testing_support::run_through(engine, {subject()});
    for (const RequestOptions& r : evicting()) testing_support::run_through(engine, {r});
    EXPECT_GT(engine.stats().tier_blocks_offloaded, 0);
  }  // the tiers finish their writes when the last owner lets go
  {
    Engine engine(*model_, *tokenizer_, config(tiers(0, dir_.string())));
    EXPECT_EQ(testing_support::run_through(engine, {subject()})[0], want);
    const EngineStats s = engine.stats();
    EXPECT_EQ(s.tier_loads, 1);
    EXPECT_GT(s.tier.disk_hits, 0);
    EXPECT_GE(s.tier_tokens_loaded, 16);
  }
  // Flip a byte in the middle of every block file: nothing is served, the prompt is computed.
  int corrupted = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir_)) {
    if (!f.is_regular_file() || f.path().extension() != ".kvb") continue;
    std::fstream io(f.path(), std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(int64_t(f.file_size() / 2));
    char c = 0;
    io.read(&c, 1);
    c = char(c ^ 0x5a);
    io.seekp(int64_t(f.file_size() / 2));
    io.write(&c, 1);
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  Engine engine(*model_, *tokenizer_, config(tiers(0, dir_.string())));
  EXPECT_EQ(testing_support::run_through(engine, {subject()})[0], want);
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.tier_load_failures, 1);
  EXPECT_GT(s.tier.corrupt_files, 0);
  EXPECT_EQ(s.tier_tokens_loaded, 0);
}

}  // namespace
}  // namespace ridge
