// The thread pool: every part of every run executes exactly once, parts never share an index at
// once, and a run completes even when a worker is slow to wake.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace ridge {
namespace {

TEST(ThreadPool, EveryPartRunsExactlyOncePerRun) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
    for (int run = 0; run < 2000; ++run) {
      std::vector<std::atomic<int>> busy(static_cast<size_t>(threads));
      pool.run([&](int part, int n) {
        ASSERT_EQ(n, threads);
        ASSERT_EQ(busy[size_t(part)].fetch_add(1), 0) << "two threads hold part " << part;
        hits[size_t(part)].fetch_add(1);
        busy[size_t(part)].fetch_sub(1);
      });
    }
    for (auto& h : hits) EXPECT_EQ(h.load(), 2000) << threads << " threads";
  }
}

TEST(ThreadPool, ParallelForCoversTheRangeOnce) {
  ThreadPool pool(3);
  for (int64_t n : {0, 1, 7, 64, 1001}) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    pool.parallel_for(n, 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
    });
    for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  }
}

TEST(ThreadPool, TheCallerTakesPartsAWorkerHasNotStarted) {
  ThreadPool pool(4);
  // Sleeping parts: with claiming, four parts of 20 ms finish in about the time the caller and the
  // three workers take, and never hang; the assertion is that every part ran.
  std::atomic<int> ran{0};
  pool.run([&](int, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ran.fetch_add(1);
  });
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace ridge
