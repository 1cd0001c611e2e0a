#include "embed/embedding_service.h"

#include <chrono>

#include "core/error.h"

namespace ridge {

struct EmbeddingService::Job {
  std::vector<EmbeddingInput> inputs;
  std::vector<float> vectors;
  std::string error;
  bool done = false;
  bool abandoned = false;  // the caller stopped waiting
};

EmbeddingService::EmbeddingService(std::unique_ptr<EmbeddingModel> model, std::string id)
    : model_(std::move(model)), id_(id.empty() ? model_->name() : std::move(id)) {
  thread_ = std::thread([this] { worker(); });
}

EmbeddingService::~EmbeddingService() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::vector<float> EmbeddingService::embed(std::vector<EmbeddingInput> inputs, const std::function<bool()>& cancelled) {
  auto job = std::make_shared<Job>();
  job->inputs = std::move(inputs);
  std::unique_lock lock(mutex_);
  if (stop_) fail("the embedding model is shutting down");
  queue_.push_back(job);
  wake_.notify_all();
  while (!job->done) {
    wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (!job->done && cancelled && cancelled()) {
      job->abandoned = true;
      return {};
    }
  }
  if (!job->error.empty()) throw Error(job->error);
  return std::move(job->vectors);
}

EmbeddingStats EmbeddingService::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void EmbeddingService::worker() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) {
      for (auto& job : queue_) job->error = "the embedding model is shutting down", job->done = true;
      queue_.clear();
      wake_.notify_all();
      return;
    }
    // Everything queued runs together; jobs given up on before their turn are skipped.
    std::vector<std::shared_ptr<Job>> jobs;
    while (!queue_.empty()) {
      if (!queue_.front()->abandoned) jobs.push_back(queue_.front());
      queue_.pop_front();
    }
    if (jobs.empty()) continue;
    lock.unlock();
    std::vector<EmbeddingInput> all;
    int64_t tokens = 0;
    for (const auto& job : jobs)
      for (EmbeddingInput& in : job->inputs) {
        tokens += int64_t(in.ids.size());
        all.push_back(std::move(in));
      }
    std::vector<float> vectors;
    std::string error;
    int64_t passes = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      // One turn at the shared cores per pass, so a long batch lets other models step between passes.
      StepGate* gate = gate_.get();
      auto pass_start = std::chrono::steady_clock::now();
      const auto leave = [&] {
        if (gate) gate->leave({0, 0, std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count()});
      };
      if (gate) gate->enter();
      try {
        model_->embed(all, vectors, [&](int64_t) {
          ++passes;
          leave();
          if (gate) gate->enter();
          pass_start = std::chrono::steady_clock::now();
        });
      } catch (...) {
        leave();
        throw;
      }
      leave();
    } catch (const std::exception& e) {
      error = e.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lock.lock();
    const size_t dims = size_t(model_->dimensions());
    size_t at = 0;
    for (const auto& job : jobs) {
      const size_t n = job->inputs.size();
      if (error.empty()) job->vectors.assign(vectors.begin() + long(at * dims), vectors.begin() + long((at + n) * dims));
      job->error = error;
      job->done = true;
      at += n;
    }
    stats_.requests += int64_t(jobs.size());
    stats_.inputs += int64_t(all.size());
    stats_.tokens += tokens;
    stats_.passes += passes;
    stats_.busy_seconds += seconds;
    wake_.notify_all();
  }
}

}  // namespace ridge
