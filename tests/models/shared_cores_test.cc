#include "models/shared_cores.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ridge::testing {
namespace {

using models::SharedCores;

TEST(SharedCores, OneEngineStepsAtATime) {
  SharedCores cores;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> engines;
  for (int e = 0; e < 3; ++e)
    engines.emplace_back([&, e] {
      auto gate = cores.join("m" + std::to_string(e));
      for (int step = 0; step < 200; ++step) {
        gate->enter();
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {}
        std::this_thread::yield();
        --inside;
        gate->leave({1, 1, 1e-4});
      }
    });
  for (auto& t : engines) t.join();
  EXPECT_EQ(most, 1);
  EXPECT_EQ(cores.turns(), 600);
}

TEST(SharedCores, TurnsAreTakenInArrivalOrder) {
  SharedCores cores;
  auto a = cores.join("a");
  auto b = cores.join("b");
  std::vector<char> order;
  std::mutex m;
  a->enter();  // a holds the cores; b queues, then a queues behind b
  std::thread tb([&] {
    b->enter();
    {
      std::lock_guard lock(m);
      order.push_back('b');
    }
    b->leave({});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::thread ta([&] {
    a->enter();
    {
      std::lock_guard lock(m);
      order.push_back('a');
    }
    a->leave({});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  a->leave({});
  tb.join();
  ta.join();
  EXPECT_EQ(order, (std::vector<char>{'b', 'a'}));
  EXPECT_GE(cores.contended_turns(), 2);
}

TEST(SharedCores, PromptChunksShrinkWhileAnotherEngineDecodes) {
  SharedCores::Options o;
  o.itl_share = 0.5;
  o.min_prefill_tokens = 4;
  SharedCores cores(o);
  auto prompt = cores.join("prompt");
  auto decoder = cores.join("decoder");
  EXPECT_EQ(prompt->prefill_cap(), 0);  // nobody decodes: no cap
  // The prompt engine: 256-token chunks of 25.6 ms (0.1 ms a token).
  for (int i = 0; i < 4; ++i) {
    prompt->enter();
    prompt->leave({256, 0, 0.0256});
  }
  EXPECT_EQ(prompt->prefill_cap(), 0);
  // The decoder: 10 ms steps of 4 decodes.
  for (int i = 0; i < 4; ++i) {
    decoder->enter();
    decoder->leave({4, 4, 0.010});
  }
  // Four slices (the step yields between layers once it has held the cores for its share) of
  // half of 10 ms, at 0.1 ms a token.
  const int64_t cap = prompt->prefill_cap();
  EXPECT_GE(cap, 199);
  EXPECT_LE(cap, 201);
  EXPECT_EQ(decoder->prefill_cap(), 0);  // the prompt engine does not decode
}

TEST(SharedCores, ADecoderThatStoppedNoLongerCapsOthers) {
  SharedCores::Options o;
  o.decoding_window = std::chrono::milliseconds(20);
  SharedCores cores(o);
  auto prompt = cores.join("prompt");
  {
    auto decoder = cores.join("decoder");
    decoder->enter();
    decoder->leave({1, 1, 0.001});
    EXPECT_GT(prompt->prefill_cap(), 0);
  }
  EXPECT_EQ(prompt->prefill_cap(), 0);  // it left
  auto other = cores.join("other");
  other->enter();
  other->leave({1, 1, 0.001});
  EXPECT_GT(prompt->prefill_cap(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(prompt->prefill_cap(), 0);  // idle past the window
}

TEST(SharedCores, APromptStepYieldsBetweenLayersToAWaitingDecoder) {
  SharedCores cores;
  auto prompt = cores.join("prompt");
  auto decoder = cores.join("decoder");
  decoder->enter();
  decoder->leave({2, 2, 0.01});  // it decodes
  prompt->enter();
  prompt->yield_to_decoders();  // nobody waits: it keeps the cores
  EXPECT_EQ(cores.yields(), 0);
  std::atomic<bool> decoded{false};
  std::thread t([&] {
    decoder->enter();  // waits behind the prompt's step
    decoded = true;
    decoder->leave({2, 2, 0.01});
  });
  while (cores.contended_turns() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(decoded);
  prompt->yield_to_decoders();  // a layer boundary: the decoder's step runs, then the prompt goes on
  EXPECT_TRUE(decoded);
  EXPECT_EQ(cores.yields(), 1);
  prompt->leave({64, 0, 0.05});
  t.join();
}

}  // namespace
}  // namespace ridge::testing
