// Speculative decoding's side of a step: before the step is planned, each decoding request gets
// its draft tokens, from the draft model or from n-gram lookup in its own tokens, with lengths the
// step-cost model chooses when --speculative auto.
#include <algorithm>

#include "spec/ngram_proposer.h"
#include "spec/spec_policy.h"
#include "engine/engine_live.h"

namespace ridge {

void Engine::propose_with_draft_model(const std::vector<RequestId>& ids, int64_t other_decodes) {
  int32_t k = config_.num_speculative_tokens;
  if (config_.speculative == SpeculativeMode::kAuto) {
    std::vector<const spec::AcceptanceStats*> stats;
    for (RequestId id : ids) stats.push_back(&live_.at(id)->acceptance);
    // Before a draft pass was timed, assume one costs the target's decode step scaled by the two
    // models' weight bytes (both read their weights once per pass).
    const double pass = draft_->pass_seconds() > 0
                            ? draft_->pass_seconds()
                            : step_cost_.predict(int64_t(ids.size())) * double(weight_bytes_of(*config_.draft_model)) /
                                  double(std::max<int64_t>(weight_bytes(), 1));
    k = spec::choose_uniform_draft_length(stats, other_decodes, step_cost_, pass, k);
  }
  if (k <= 0) return;
  std::vector<spec::DraftRequest> requests;
  for (RequestId id : ids) {
    Live& live = *live_.at(id);
    requests.push_back({id, scheduler_->tokens(id), k, &live.draft_sampler, live.options.sampling.temperature > 0,
                        config_.draft_p_min});
  }
  std::vector<spec::DraftProposal> proposals = draft_->propose(requests);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (proposals[i].tokens.empty()) continue;
    live_.at(ids[i])->draft_q = std::move(proposals[i].q);
    scheduler_->set_draft(ids[i], std::move(proposals[i].tokens));
  }
}

void Engine::propose_drafts() {
  if (config_.speculative == SpeculativeMode::kOff) return;
  if (config_.speculative == SpeculativeMode::kAuto) {
    int64_t decoding = 0;
    for (auto& [id, live] : live_) decoding += scheduler_->decoding(id);
    spec_switch_decoding_ = decoding;
    if (decoding == 0 || !spec_switch_.allowed(decoding)) return;
  }
  std::vector<RequestId> ids;
  std::vector<spec::DraftCandidate> candidates;
  std::vector<std::vector<int32_t>> drafts;
  int64_t other_decodes = 0;
  if (draft_ && config_.speculative != SpeculativeMode::kNgram) {
    for (auto& [id, live] : live_) {
      if (!scheduler_->decoding(id)) continue;
      if (live->matcher) {
        ++other_decodes;
      } else {
        ids.push_back(id);
      }
    }
    if (!ids.empty()) propose_with_draft_model(ids, other_decodes);
    return;
  }
  for (auto& [id, live] : live_) {
    if (!scheduler_->decoding(id)) continue;
    // A grammar's masks are for one position; its forced text is appended by jump-forward instead.
    std::vector<int32_t> d = live->matcher ? std::vector<int32_t>{}
                                           : spec::propose_ngram(scheduler_->tokens(id), config_.num_speculative_tokens, config_.ngram);
    if (d.empty()) {
      ++other_decodes;
      continue;
    }
    ids.push_back(id);
    candidates.push_back({int32_t(d.size()), &live->acceptance});
    drafts.push_back(std::move(d));
  }
  if (ids.empty()) return;
  std::vector<int32_t> lengths;
  if (config_.speculative == SpeculativeMode::kAuto) {
    lengths = spec::choose_draft_lengths(candidates, other_decodes, step_cost_);
  } else {
    for (const auto& c : candidates) lengths.push_back(c.max_tokens);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (lengths[i] <= 0) continue;
    drafts[i].resize(size_t(lengths[i]));
    scheduler_->set_draft(ids[i], std::move(drafts[i]));
  }
}

}  // namespace ridge
