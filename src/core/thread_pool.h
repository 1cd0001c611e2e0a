#pragma once
// A persistent pool of worker threads for the forward pass. One `run` splits a job into size()
// parts, job(part, size()), and returns when all parts have run. Parts are claimed, not assigned:
// whichever thread is free takes the next one, so a worker the OS has descheduled (a busy
// machine, a server's HTTP threads) delays nothing: the caller runs its part too. Each part still
// runs on exactly one thread, so results never depend on which. Workers spin on an atomic
// generation counter for a short while before sleeping on a condition variable, so the ~150
// parallel regions of one decode step cost microseconds, not a thread wake-up each.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ridge {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // n_threads <= 0: one per core
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs job(i, size()) for every part i, each on one thread (the caller takes parts too), and
  // waits for all. `i` also names per-part scratch: no two threads hold the same i at once.
  void run(const std::function<void(int thread_index, int n_threads)>& job);

  // Splits [0, n) into contiguous chunks, one per thread (chunk boundaries multiples of `grain`).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

 private:
  void worker_loop();
  void wake_workers();
  void run_parts();  // claims and runs parts of the current job until none is left

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<uint64_t> claim_{0};  // (run number << 32) | next unclaimed part
  alignas(64) std::atomic<int> done_{0};        // parts finished in the current run
  uint64_t runs_ = 0;
  alignas(64) std::atomic<bool> stop_{false};
  std::mutex sleep_mutex_;  // guards the sleep of idle workers (not the spin path)
  std::condition_variable wake_;
};

// [begin, end) of `n` items for thread `index` of `n_threads`, in chunks that are multiples of `grain`.
struct Range {
  int64_t begin, end;
};
Range split_range(int64_t n, int64_t grain, int index, int n_threads);

}  // namespace ridge
