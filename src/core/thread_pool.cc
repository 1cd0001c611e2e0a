#include "core/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ridge {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

constexpr int kSpinsBeforeSleep = 1 << 16;

}  // namespace

Range split_range(int64_t n, int64_t grain, int index, int n_threads) {
  const int64_t chunks = (n + grain - 1) / grain;
  const int64_t per_thread = chunks / n_threads, extra = chunks % n_threads;
  const int64_t first = index * per_thread + std::min<int64_t>(index, extra);
  const int64_t count = per_thread + (index < extra ? 1 : 0);
  return {std::min(n, first * grain), std::min(n, (first + count) * grain)};
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads > 0 ? n_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

void ThreadPool::wake_workers() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
  // Taking the lock orders this increment against a worker that checked the counter and is about
  // to sleep: it either sees the new value or is already waiting when we notify.
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wake_.notify_all();
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  wake_workers();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& job) {
  if (n_threads_ == 1) {
    job(0, 1);
    return;
  }
  job_ = &job;
  done_.store(0, std::memory_order_relaxed);
  claim_.store(++runs_ << 32, std::memory_order_release);  // publishes job_ with the new run's parts
  wake_workers();
  run_parts();
  // Wait for parts taken by workers: spin first (the common case: they finish within microseconds).
  for (int spins = 0; done_.load(std::memory_order_acquire) != n_threads_; ++spins) {
    if (spins < kSpinsBeforeSleep) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
}

void ThreadPool::run_parts() {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    const auto part = int(claim & 0xffffffffu);
    if (part >= n_threads_) return;
    // A successful exchange names a part of the run in progress: the caller cannot finish that run
    // (and replace job_) before this part is done.
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    (*job_)(part, n_threads_);
    done_.fetch_add(1, std::memory_order_acq_rel);
    claim = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  run([&](int index, int count) {
    const Range r = split_range(n, grain, index, count);
    if (r.begin < r.end) body(r.begin, r.end);
  });
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;  // the value at construction: a run may start before this thread does
  for (;;) {
    int spins = 0;
    uint64_t now;
    while ((now = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spins < kSpinsBeforeSleep) {
        cpu_relax();
      } else {
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      }
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    run_parts();
  }
}

}  // namespace ridge
