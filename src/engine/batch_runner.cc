#include "engine/batch_runner.h"

namespace ridge {

void BatchRunner::run(const StepPlan& plan, const Scheduler& scheduler, const KvManager& kv) {
  tokens_.clear();
  runs_.clear();
  sampling_.clear();
  rows_.clear();
  n_rows_.clear();
  prompt_runs_.clear();
  size_t n_logit_rows = 0;
  for (const ScheduledRequest& s : plan.requests)
    for (const BlockCopy& copy : s.copies) forward_.copy_block(copy.src, copy.dst);
  for (const ScheduledRequest& s : plan.requests) {
    const std::span<const int32_t> all = scheduler.tokens(s.id);
    const int64_t n_known = s.n_tokens - s.n_draft;
    tokens_.insert(tokens_.end(), all.begin() + s.first_position, all.begin() + s.first_position + n_known);
    const std::span<const int32_t> draft = scheduler.draft_in_flight(s.id);
    tokens_.insert(tokens_.end(), draft.begin(), draft.begin() + s.n_draft);
    // A draft run is a decode (one known token) and its drafts: every position's logits are wanted;
    // so are a prompt chunk's when the request asked for prompt log-probabilities.
    const int64_t n_prompt = scheduler.n_prompt(s.id);
    const bool prompt_logits = scheduler.wants_prompt_logits(s.id) && s.first_position < n_prompt;
    const LogitsWanted wanted = prompt_logits || (s.samples && s.n_draft > 0) ? LogitsWanted::All
                                : s.samples                                    ? LogitsWanted::Last
                                                                               : LogitsWanted::None;
    runs_.push_back({s.n_tokens, s.first_position, kv.block_table(s.id), wanted, n_prompt, adapter_of_ ? adapter_of_(s.id) : nullptr});
    const size_t n_rows = wanted == LogitsWanted::All ? size_t(s.n_tokens) : wanted == LogitsWanted::Last ? 1 : 0;
    if (prompt_logits)
      prompt_runs_.push_back({s.id, s.first_position, std::min(s.n_tokens, n_prompt - s.first_position), n_logit_rows});
    if (s.samples) {
      sampling_.push_back(s.id);
      // A prompt chunk that samples: its last row is the sample's (no drafts on a prompt chunk).
      const size_t sample_rows = prompt_logits ? 1 : n_rows;
      rows_.push_back(n_logit_rows + n_rows - sample_rows);
      n_rows_.push_back(sample_rows);
    }
    n_logit_rows += n_rows;
  }
  if (runs_.empty()) return;
  TokenBatch batch{tokens_, runs_};
  batch.on_layer_kv = layer_hook_;
  forward_.forward(batch, logits_);
}

std::span<const float> BatchRunner::logits(size_t i, size_t row) const { return this->row(rows_[i] + row); }

std::span<const float> BatchRunner::row(size_t r) const {
  const auto n_vocab = size_t(forward_.spec().n_vocab);
  return std::span(logits_).subspan(r * n_vocab, n_vocab);
}

}  // namespace ridge
