// Disaggregated prefill/decode inside one process: a decode engine whose long prompts are
// prefilled by a second engine (its KvSender putting K/V into the decode engine's pool through the
// loopback transport) must give every request exactly the tokens and log-probabilities of one
// co-located engine, with prefix hits, short prompts computed locally, cancellations and failed
// transfers; and every block must come back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <numeric>
#include <thread>

#include "engine/engine.h"
#include "../engine/engine_test_support.h"
#include "kv_transfer/kv_sender.h"
#include "kv_transfer/pool_description.h"
#include "kv_transfer/transport.h"

namespace ridge {
namespace {

using testing_support::Output;

// The decode side's RemotePrefill, calling the prefill engine directly (the HTTP hop of
// serve/kv_prefill_route left out).
class InProcessPrefill final : public RemotePrefill {
 public:
  InProcessPrefill(Engine& prefill, kvx::KvTransport& prefill_transport, kvx::KvTransport& decode_transport, int32_t decode_blocks)
      : prefill_(prefill), transport_(prefill_transport), decode_(decode_transport), decode_blocks_(decode_blocks) {}
  int64_t min_tokens() const override { return 24; }
  void start(RemotePrefillJob job, std::function<void(RemotePrefillResult)> done) override {
    ++started;
    if (fail_next.exchange(false)) {  // the prefill instance is down
      std::thread([id = job.id, done] { done({id, false, "down", 0, 0}); }).detach();
      return;
    }
    kvx::SendTarget t;
    t.peer = decode_.address();
    t.transfer_id = std::to_string(job.id);
    t.n_positions = int64_t(job.tokens.size());
    t.first_block = job.first_position / 16;
    t.dst_blocks = job.blocks;
    t.remote_n_blocks = decode_blocks_;
    first_positions.push_back(job.first_position);
    auto sender = std::make_shared<kvx::KvSender>(transport_, *prefill_.host_kv_store(), t);
    RequestOptions o;
    o.prompt = job.tokens;
    o.kv_sink = sender;
    prefill_.submit(std::move(o), [id = job.id, done, sender](const TokenEvent& e) {
      if (e.finish == FinishReason::None) return;
      done({id, e.finish == FinishReason::Stop, "", sender->report().bytes, 0});
    });
  }
  void cancel(RequestId) override {}
  std::atomic<int> started{0};
  std::atomic<bool> fail_next{false};
  std::vector<int64_t> first_positions;

 private:
  Engine& prefill_;
  kvx::KvTransport& transport_;
  kvx::KvTransport& decode_;
  int32_t decode_blocks_;
};

class DisaggEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tiny_ = testing_support::make_tiny_model("disagg_test", 3).release();
    model_ = &tiny_->model;
    tokenizer_ = &tiny_->tokenizer;
  }
  static void TearDownTestSuite() { delete tiny_; }
  static EngineConfig config(KvDtype dtype) {
    EngineConfig c;
    c.n_threads = 1;
    c.n_ctx = 256;
    c.kv_dtype = dtype;
    c.kv_memory_bytes = 4 << 20;
    c.max_batched_tokens = 64;  // long prompts take several chunks on the prefill side
    return c;
  }
  static std::vector<RequestOptions> workload() {
    using testing_support::greedy_request;
    using testing_support::random_prompt;
    std::vector<RequestOptions> r;
    const std::vector<int32_t> shared = random_prompt(7, 70);
    for (int i = 0; i < 3; ++i) {  // a shared 70-token prefix (four full blocks) with different tails
      std::vector<int32_t> p = shared;
      const auto tail = random_prompt(100 + uint32_t(i), 20 + 13 * i);
      p.insert(p.end(), tail.begin(), tail.end());
      r.push_back(greedy_request(p, 12));
    }
    r.push_back(greedy_request(random_prompt(3, 10), 12));   // short: computed on the decode side
    r.push_back(greedy_request(random_prompt(4, 150), 12));  // long, not block-aligned
    r.push_back(greedy_request(random_prompt(5, 33), 12));   // 32 positions to send: exactly two blocks
    return r;
  }
  static inline testing_support::TinyModel* tiny_ = nullptr;
  static inline Model* model_ = nullptr;
  static inline Tokenizer* tokenizer_ = nullptr;
};

struct Pair {
  std::unique_ptr<kvx::KvTransport> prefill_transport = kvx::make_loopback_transport();
  std::unique_ptr<kvx::KvTransport> decode_transport = kvx::make_loopback_transport();
  KvAllocator allocator = [this](size_t n) { return decode_transport->allocate(n); };
  std::unique_ptr<Engine> prefill, decode;
  std::shared_ptr<InProcessPrefill> remote;
};

std::unique_ptr<Pair> make_pair(const Model& model, const Tokenizer& tokenizer, EngineConfig c) {
  auto p = std::make_unique<Pair>();
  p->prefill = std::make_unique<Engine>(model, tokenizer, c);
  p->prefill->start();
  EngineConfig dc = c;
  dc.kv_allocator = &p->allocator;
  // The remote's pointer to the decode engine's pool size is known once the engine is made; the
  // plan is the same as the prefill engine's (same config).
  p->remote = std::make_shared<InProcessPrefill>(*p->prefill, *p->prefill_transport, *p->decode_transport,
                                                 p->prefill->memory_plan().n_blocks);
  dc.remote_prefill = p->remote;
  p->decode = std::make_unique<Engine>(model, tokenizer, dc);
  return p;
}

TEST_F(DisaggEngineTest, GreedyOutputIsTheColocatedEnginesForEveryKvType) {
  for (KvDtype dtype : {KvDtype::F16, KvDtype::FP8_E4M3}) {
    const std::vector<RequestOptions> requests = workload();
    Engine colocated(*model_, *tokenizer_, config(dtype));
    const std::vector<Output> want = testing_support::run_through(colocated, requests);
    auto pair = make_pair(*model_, *tokenizer_, config(dtype));
    const std::vector<Output> got = testing_support::run_through(*pair->decode, requests);
    for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i << " kv " << int(dtype);
    const EngineStats s = pair->decode->stats();
    EXPECT_EQ(pair->remote->started, 5);  // all but the short prompt
    EXPECT_EQ(s.remote_prefills, 5);
    EXPECT_EQ(s.remote_prefill_failures, 0);
    EXPECT_GT(s.kv_bytes_received, 0);
    EXPECT_EQ(s.kv_blocks_used, 0);
    pair->prefill->stop();  // publishes its last counters
    const EngineStats p = pair->prefill->stats();
    EXPECT_EQ(p.kv_transfers_sent, 5);
    EXPECT_EQ(p.kv_blocks_used, 0);
    // One histogram entry per transfer, on both sides; the byte sums agree with the counters.
    const auto total = [](const auto& h) { return std::accumulate(h.counts.begin(), h.counts.end(), int64_t{0}); };
    EXPECT_EQ(total(s.kv_received_bytes_histogram), 5);
    EXPECT_EQ(s.kv_received_bytes_histogram.sum, double(s.kv_bytes_received));
    EXPECT_EQ(total(p.kv_sent_bytes_histogram), 5);
    EXPECT_EQ(p.kv_sent_bytes_histogram.sum, double(p.kv_bytes_sent));
    EXPECT_EQ(total(p.kv_send_bandwidth_histogram), 5);
    EXPECT_GT(p.kv_send_bandwidth_histogram.sum, 0);
    EXPECT_EQ(total(p.kv_send_exposed_histogram), 5);
  }
}

TEST_F(DisaggEngineTest, APrefixCachedOnTheDecodeSideIsNotSentAgain) {
  auto pair = make_pair(*model_, *tokenizer_, config(KvDtype::F16));
  std::vector<RequestOptions> requests = workload();
  requests.resize(3);
  testing_support::run_through(*pair->decode, {requests[0]});
  testing_support::run_through(*pair->decode, {requests[1], requests[2]});
  ASSERT_EQ(pair->remote->first_positions.size(), 3u);
  EXPECT_EQ(pair->remote->first_positions[0], 0);
  EXPECT_EQ(pair->remote->first_positions[1], 64);  // four cached blocks of the shared prefix
  EXPECT_EQ(pair->remote->first_positions[2], 64);
}

TEST_F(DisaggEngineTest, AFailedTransferIsComputedHereAndItsBlocksComeBack) {
  const std::vector<RequestOptions> requests = workload();
  Engine colocated(*model_, *tokenizer_, config(KvDtype::F16));
  const std::vector<Output> want = testing_support::run_through(colocated, {requests[4]});
  auto pair = make_pair(*model_, *tokenizer_, config(KvDtype::F16));
  pair->remote->fail_next = true;
  const std::vector<Output> got = testing_support::run_through(*pair->decode, {requests[4]});
  EXPECT_EQ(got[0], want[0]);
  EngineStats s = pair->decode->stats();
  EXPECT_EQ(s.remote_prefill_failures, 1);
  EXPECT_GT(s.kv_blocks_quarantined, 0);  // until the failed transfer can no longer write
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  pair->decode->step();
  s = pair->decode->stats();
  EXPECT_EQ(s.kv_blocks_quarantined, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
}

TEST_F(DisaggEngineTest, ACancelledRequestWaitingForItsKvFreesEverything) {
  auto pair = make_pair(*model_, *tokenizer_, config(KvDtype::F16));
  const std::vector<RequestOptions> requests = workload();
  FinishReason finish = FinishReason::None;
  const RequestId id = pair->decode->submit(requests[4], [&](const TokenEvent& e) {
    if (e.finish != FinishReason::None) finish = e.finish;
  });
  pair->decode->step();  // admitted: its prefill starts on the other engine
  pair->decode->cancel(id);
  pair->decode->run_until_idle();
  EXPECT_EQ(finish, FinishReason::Abort);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pair->decode->stats().kv_blocks_used + pair->decode->stats().kv_blocks_quarantined > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pair->decode->step();
  }
  EXPECT_EQ(pair->decode->stats().kv_blocks_used, 0);
  pair->prefill->stop();
  EXPECT_EQ(pair->prefill->stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace ridge
