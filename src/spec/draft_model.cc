#include "spec/draft_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "backend/device.h"
#include "engine/sampling_steps.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge::spec {

namespace {

Model with_head_rows(const Model& model, int64_t vocab_rows) {
  Model m = model;
  WeightRef& head = m.weights.output;
  if (vocab_rows <= 0 || vocab_rows >= head.rows || m.shard) return m;
  // Whole tiles, so a packed head stays a prefix of its bytes (kernels/cpu/packed_layout.h).
  head.rows = std::min(head.rows, (vocab_rows + cpu::kTileRows - 1) / cpu::kTileRows * cpu::kTileRows);
  return m;
}

}  // namespace

DraftModel::DraftModel(const Model& model, const PagedForwardConfig& config, int64_t vocab_rows)
    : model_(with_head_rows(model, vocab_rows)),
      forward_(make_paged_forward(model_, config)),
      kv_(KvConfig{config.n_blocks, config.block_size, false}) {}

void DraftModel::release(RequestId id) {
  kv_.free(id);
  seqs_.erase(id);
}

std::vector<DraftProposal> DraftModel::propose(std::span<const DraftRequest> requests) {
  std::vector<DraftProposal> out(requests.size());
  // Live drafts this round: index into requests, and the token each feeds next.
  struct Active {
    size_t r;
    std::vector<int32_t> feed;  // tokens to compute this pass (catch-up first, then one per pass)
    int64_t first_position;
    std::vector<int32_t> history;  // for the sampler's penalties
  };
  std::vector<Active> active;
  for (size_t i = 0; i < requests.size(); ++i) {
    const DraftRequest& req = requests[i];
    if (req.k <= 0 || req.tokens.empty()) continue;
    Seq& seq = seqs_[req.id];
    // Keep the K/V of the longest common prefix of what was computed and the request's tokens;
    // the last token is always computed now (its logits give the first draft).
    const auto limit = std::min(seq.computed.size(), req.tokens.size() - 1);
    size_t common = 0;
    while (common < limit && seq.computed[common] == req.tokens[common]) ++common;
    seq.computed.resize(common);
    kv_.truncate(req.id, int64_t(common));
    const int64_t n_feed = int64_t(req.tokens.size() - common);
    // Slots for the catch-up and the k - 1 drafts fed back, taken now so the passes below cannot run
    // out; without room this request drafts nothing.
    if (!kv_.allocate_for(req.id, n_feed + req.k - 1).ok) {
      release(req.id);
      continue;
    }
    Active a{i, {req.tokens.begin() + int64_t(common), req.tokens.end()}, int64_t(common), {}};
    // The penalties see the history the head can score (tokens past a cut head have no logit).
    for (int32_t t : req.tokens)
      if (t < head_rows()) a.history.push_back(t);
    active.push_back(std::move(a));
  }
  std::vector<int32_t> tokens;
  std::vector<SequenceRun> runs;
  while (!active.empty()) {
    tokens.clear();
    runs.clear();
    for (Active& a : active) {
      const DraftRequest& req = requests[a.r];
      tokens.insert(tokens.end(), a.feed.begin(), a.feed.end());
      runs.push_back({int64_t(a.feed.size()), a.first_position, kv_.block_table(req.id), LogitsWanted::Last});
    }
    const auto start = std::chrono::steady_clock::now();
    forward_->forward(TokenBatch{tokens, runs}, logits_);
    if (tokens.size() == active.size()) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      pass_seconds_ = pass_seconds_ > 0 ? 0.8 * pass_seconds_ + 0.2 * seconds : seconds;
    }
    const auto n_vocab = size_t(head_rows());
    std::vector<Active> next;
    for (size_t i = 0; i < active.size(); ++i) {
      Active& a = active[i];
      const DraftRequest& req = requests[a.r];
      Seq& seq = seqs_[req.id];
      seq.computed.insert(seq.computed.end(), a.feed.begin(), a.feed.end());
      const std::span<const float> row(logits_.data() + i * n_vocab, n_vocab);
      DraftProposal& p = out[a.r];
      std::vector<float> q;
      const int32_t token = req.want_distributions ? req.sampler->sample_with_distribution(row, a.history, q).token
                                                   : req.sampler->draw(row, a.history);
      p.tokens.push_back(token);
      if (req.want_distributions) {
        q.resize(size_t(forward_->spec().n_vocab), 0.0f);  // no mass past a cut head
        p.q.push_back(std::move(q));
      }
      if (int32_t(p.tokens.size()) >= req.k) continue;
      if (req.p_min > 0.0f) {
        const double confidence = req.want_distributions ? double(p.q.back()[size_t(token)])
                                                         : std::exp(double(row[size_t(token)]) - log_sum_exp(row));
        if (confidence < double(req.p_min)) continue;
      }
      a.first_position += int64_t(a.feed.size());
      a.feed.assign(1, token);
      a.history.push_back(token);
      next.push_back(std::move(a));
    }
    active = std::move(next);
  }
  return out;
}

}  // namespace ridge::spec
