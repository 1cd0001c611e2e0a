#include "loadgen/load_runner.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace ridge::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

// Workers are started as requests become due and no free one is left, up to the cap, so a slow
// rate needs few threads and a burst gets as many as it has requests.
class WorkerPool {
 public:
  WorkerPool(const std::vector<RequestSpec>& requests, const SendFn& send, const DoneFn& on_done, size_t cap,
             Clock::time_point start, std::vector<RequestResult>& results)
      : requests_(requests), send_(send), on_done_(on_done), cap_(cap), start_(start), results_(results) {}

  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void submit(size_t index) {
    std::lock_guard lock(mutex_);
    queue_.push_back(index);
    if (queue_.size() > free_ && threads_.size() < cap_) {
      ++free_;
      threads_.emplace_back([this] { work(); });
    }
    ready_.notify_one();
  }

 private:
  // A request that throws is a failed request, not the end of the run.
  RequestResult send_safely(const RequestSpec& request) {
    try {
      return send_(request);
    } catch (const std::exception& e) {
      RequestResult failed;
      failed.error = e.what();
      return failed;
    }
  }

  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const size_t index = queue_.front();
      queue_.pop_front();
      --free_;
      lock.unlock();
      const auto sent = Clock::now();
      RequestResult r = send_safely(requests_[index]);
      r.start_s = std::chrono::duration<double>(sent - start_).count();
      lock.lock();
      results_[index] = std::move(r);
      if (on_done_) on_done_(results_[index]);
      ++free_;
    }
  }

  const std::vector<RequestSpec>& requests_;
  const SendFn& send_;
  const DoneFn& on_done_;
  const size_t cap_;
  const Clock::time_point start_;
  std::vector<RequestResult>& results_;

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<size_t> queue_;
  std::vector<std::thread> threads_;
  size_t free_ = 0;  // workers not holding a request
  bool closing_ = false;
};

}  // namespace

RunResult run_load(const std::vector<RequestSpec>& requests, const LoadShape& shape, const SendFn& send, const DoneFn& on_done) {
  RunResult out;
  out.requests.resize(requests.size());
  const std::vector<double> due = arrival_times(int(requests.size()), shape.request_rate, shape.arrival, shape.seed);
  const size_t cap = shape.max_concurrency > 0 ? size_t(shape.max_concurrency) : requests.size();
  const auto start = Clock::now();
  {
    WorkerPool pool(requests, send, on_done, cap, start, out.requests);
    for (size_t i = 0; i < requests.size(); ++i) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(due[i])));
      pool.submit(i);
    }
  }  // the pool's destructor waits for the last request
  out.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace ridge::loadgen
