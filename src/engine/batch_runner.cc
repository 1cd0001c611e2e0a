#include "engine/batch_runner.h"

namespace ridge {

void BatchRunner::run(const StepPlan& plan, const Scheduler& scheduler, const KvManager& kv) {
  tokens_.clear();
  runs_.clear();
  sampling_.clear();
  for (const ScheduledRequest& s : plan.requests)
    for (const BlockCopy& copy : s.copies) forward_.copy_block(copy.src, copy.dst);
  for (const ScheduledRequest& s : plan.requests) {
    const std::span<const int32_t> all = scheduler.tokens(s.id);
    tokens_.insert(tokens_.end(), all.begin() + s.first_position, all.begin() + s.first_position + s.n_tokens);
    runs_.push_back({s.n_tokens, s.first_position, kv.block_table(s.id), s.samples ? LogitsWanted::Last : LogitsWanted::None});
    if (s.samples) sampling_.push_back(s.id);
  }
  if (runs_.empty()) return;
  forward_.forward(TokenBatch{tokens_, runs_}, logits_);
}

std::span<const float> BatchRunner::logits(size_t i) const {
  const auto n_vocab = size_t(forward_.spec().n_vocab);
  return std::span(logits_).subspan(i * n_vocab, n_vocab);
}

}  // namespace ridge
