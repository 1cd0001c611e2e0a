#pragma once
// A persistent pool of worker threads for the forward pass. One `run` hands every thread the
// same job (job(thread_index, n_threads)) and returns when all have finished. Workers spin on
// an atomic generation counter for a short while before sleeping on a condition variable, so the ~150 parallel regions
// of one decode step cost microseconds, not a thread wake-up each.
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

  // Runs job(i, size()) on every thread i (the caller is thread 0) and waits for all.
  void run(const std::function<void(int thread_index, int n_threads)>& job);

  // Splits [0, n) into contiguous chunks, one per thread (chunk boundaries multiples of `grain`).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

 private:
  void worker_loop(int index);
  void wake_workers();

  int n_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
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
