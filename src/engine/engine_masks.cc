// Grammar masks computed beside the forward pass: a worker builds each constrained request's
// token mask while the step runs, and the step waits for them before sampling.
#include <algorithm>

#include "engine/engine_live.h"
#include "engine/grammar_step.h"

namespace ridge {

void Engine::start_masks(const StepPlan& plan) {
  std::vector<MaskWorker::Job> jobs;
  for (const ScheduledRequest& s : plan.requests) {
    if (!s.samples) continue;
    Live& live = *live_.at(s.id);
    if (live.matcher) jobs.push_back({live.matcher.get(), &live.mask});
  }
  if (jobs.empty()) return;
  if (!mask_worker_) mask_worker_ = std::make_unique<MaskWorker>();
  mask_worker_->start(std::move(jobs));
}

void Engine::finish_masks() {
  if (!mask_worker_) return;
  for (const MaskWorker::Job& job : mask_worker_->wait()) {
    ++own_.grammar_masks;
    own_.grammar_mask_seconds += job.seconds;
    own_.grammar_mask_max_seconds = std::max(own_.grammar_mask_max_seconds, job.seconds);
    const auto bucket = std::lower_bound(kGrammarMaskBuckets.begin(), kGrammarMaskBuckets.end(), job.seconds);
    ++own_.grammar_mask_histogram[size_t(bucket - kGrammarMaskBuckets.begin())];
  }
}

}  // namespace ridge
