#pragma once
// An embedding model shared by many callers (the server's HTTP threads): each call queues its
// inputs and waits; one worker thread takes everything queued, runs it through the model in passes
// packed by length (EmbeddingModel::embed, at most max_batch_tokens per pass) and hands each caller
// its vectors. Many small requests thus share passes, as decode steps share a batch, and no KV
// cache is involved at all.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "embed/embedding_model.h"
#include "engine/step_gate.h"

namespace ridge {

struct EmbeddingStats {
  int64_t requests = 0;  // calls answered
  int64_t inputs = 0;    // texts (or pairs) embedded
  int64_t tokens = 0;
  int64_t passes = 0;    // encoder passes run
  double busy_seconds = 0.0;
};

class EmbeddingService {
 public:
  explicit EmbeddingService(std::unique_ptr<EmbeddingModel> model, std::string id = "");
  ~EmbeddingService();
  EmbeddingService(const EmbeddingService&) = delete;
  EmbeddingService& operator=(const EmbeddingService&) = delete;

  const std::string& id() const { return id_; }  // the name clients pass as "model"
  const EmbeddingModel& model() const { return *model_; }  // tokenization and shapes (thread-safe: const)

  // (inputs.size(), model().dimensions()) vectors. Blocks until done. Error (the model's) for a bad
  // input; the other callers' inputs are unaffected. cancelled() is polled while waiting: when it
  // turns true the call returns an empty vector and its inputs are dropped if not yet started.
  std::vector<float> embed(std::vector<EmbeddingInput> inputs, const std::function<bool()>& cancelled = {});
  EmbeddingStats stats() const;
  // Several models on one machine: each pass runs inside a turn at the shared gate (before the
  // first embed() call).
  void set_step_gate(std::shared_ptr<StepGate> gate) { gate_ = std::move(gate); }

 private:
  struct Job;
  void worker();

  std::unique_ptr<EmbeddingModel> model_;
  std::string id_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
  EmbeddingStats stats_;
  std::shared_ptr<StepGate> gate_;
  std::thread thread_;
};

}  // namespace ridge
