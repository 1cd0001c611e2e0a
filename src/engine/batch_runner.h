#pragma once
// Turns a scheduler step into one forward pass: the step's runs (decode tokens and prefill chunks
// of many requests) packed into a TokenBatch over the paged KV store, copy-on-write copies done
// first. The only place where scheduler ids meet tensors.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/paged_forward.h"
#include "engine/scheduler.h"
#include "kv/kv_manager.h"

namespace ridge {

class BatchRunner {
 public:
  explicit BatchRunner(PagedForward& forward) : forward_(forward) {}

  // Runs the plan. Afterwards sampling_requests() lists, in plan order, the requests whose run
  // ended at their last token, and logits(i) is the next-token distribution of the i-th of them;
  // a run with drafts has 1 + n_draft rows, logits(i, j) after its j-th draft (j = 0: before any).
  void run(const StepPlan& plan, const Scheduler& scheduler, const KvManager& kv);

  std::span<const RequestId> sampling_requests() const { return sampling_; }
  std::span<const float> logits(size_t i, size_t row = 0) const;
  size_t n_rows(size_t i) const { return n_rows_[i]; }

  // Runs over prompt positions of requests that want every prompt position's logits
  // (Scheduler::wants_prompt_logits): prompt_logits(k, j) follows position first_position + j.
  struct PromptRun {
    RequestId id;
    int64_t first_position;
    int64_t n_positions;
    size_t first_row;
  };
  std::span<const PromptRun> prompt_runs() const { return prompt_runs_; }
  std::span<const float> row(size_t r) const;
  // Called after each layer's K/V is in the store during the next run() (nullptr: none).
  void set_layer_hook(const std::function<void(int64_t layer)>* hook) { layer_hook_ = hook; }
  // Each request's LoRA adapter (null: the base), asked once per run of a step.
  void set_adapter_lookup(std::function<const lora::LoraAdapter*(RequestId)> lookup) { adapter_of_ = std::move(lookup); }

 private:
  const std::function<void(int64_t layer)>* layer_hook_ = nullptr;
  std::function<const lora::LoraAdapter*(RequestId)> adapter_of_;
  PagedForward& forward_;  // the pass and its KV store, on the CPU or a GPU
  std::vector<int32_t> tokens_;
  std::vector<SequenceRun> runs_;
  std::vector<RequestId> sampling_;
  std::vector<size_t> rows_, n_rows_;  // sampling request i has logits rows rows_[i] .. rows_[i] + n_rows_[i] - 1
  std::vector<PromptRun> prompt_runs_;
  std::vector<float> logits_;
};

}  // namespace ridge
