#include "engine/batch_runner.h"

namespace ridge {

void BatchRunner::run(const StepPlan& plan, const Scheduler& scheduler, const KvManager& kv) {
  tokens_.clear();
  runs_.clear();
  sampling_.clear();
  rows_.assign(1, 0);
  for (const ScheduledRequest& s : plan.requests)
    for (const BlockCopy& copy : s.copies) forward_.copy_block(copy.src, copy.dst);
  for (const ScheduledRequest& s : plan.requests) {
    const std::span<const int32_t> all = scheduler.tokens(s.id);
    const int64_t n_known = s.n_tokens - s.n_draft;
    tokens_.insert(tokens_.end(), all.begin() + s.first_position, all.begin() + s.first_position + n_known);
    const std::span<const int32_t> draft = scheduler.draft_in_flight(s.id);
    tokens_.insert(tokens_.end(), draft.begin(), draft.begin() + s.n_draft);
    // A draft run is a decode (one known token) and its drafts: every position's logits are wanted.
    const LogitsWanted wanted = !s.samples ? LogitsWanted::None : s.n_draft > 0 ? LogitsWanted::All : LogitsWanted::Last;
    runs_.push_back({s.n_tokens, s.first_position, kv.block_table(s.id), wanted, scheduler.n_prompt(s.id)});
    if (s.samples) {
      sampling_.push_back(s.id);
      rows_.push_back(rows_.back() + size_t(wanted == LogitsWanted::All ? s.n_tokens : 1));
    }
  }
  if (runs_.empty()) return;
  TokenBatch batch{tokens_, runs_};
  batch.on_layer_kv = layer_hook_;
  forward_.forward(batch, logits_);
}

std::span<const float> BatchRunner::logits(size_t i, size_t row) const {
  const auto n_vocab = size_t(forward_.spec().n_vocab);
  return std::span(logits_).subspan((rows_[i] + row) * n_vocab, n_vocab);
}

}  // namespace ridge
