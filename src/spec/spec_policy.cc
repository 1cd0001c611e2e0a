#include "spec/spec_policy.h"

#include <algorithm>
#include <queue>

namespace ridge::spec {

void StepCostModel::observe(int64_t n_tokens, double seconds) {
  if (n_tokens <= 0 || !(seconds > 0)) return;
  points_.emplace_back(n_tokens, seconds);
  if (points_.size() > window_) points_.pop_front();
  fitted_ = false;
}

void StepCostModel::fit() const {
  fitted_ = true;
  t0_ = t1_ = 0;
  if (points_.empty()) return;
  double sn = 0, st = 0, snn = 0, snt = 0;
  int64_t lo = points_.front().first, hi = lo;
  for (const auto& [n, t] : points_) {
    sn += double(n), st += t, snn += double(n) * double(n), snt += double(n) * t;
    lo = std::min(lo, n), hi = std::max(hi, n);
  }
  const double m = double(points_.size());
  const double denom = m * snn - sn * sn;
  if (hi > lo && denom > 0) {
    t1_ = std::max(0.0, (m * snt - sn * st) / denom);
    t0_ = std::max(0.0, (st - t1_ * sn) / m);
    if (t0_ + t1_ > 0) return;
  }
  // One size only: the bandwidth-bound prior, T(n) = T(mean) (1 + (n - mean) / 32) around the data.
  const double mean_n = sn / m, mean_t = st / m;
  t1_ = mean_t / (32.0 + mean_n);
  t0_ = std::max(0.0, mean_t - t1_ * mean_n);
}

double StepCostModel::predict(int64_t n_tokens) const {
  if (!fitted_) fit();
  return t0_ + t1_ * double(n_tokens);
}

double StepCostModel::slope() const {
  if (!fitted_) fit();
  return t1_;
}

double StepCostModel::intercept() const {
  if (!fitted_) fit();
  return t0_;
}

AcceptanceStats::AcceptanceStats(int32_t max_positions, const AcceptanceStats* prior)
    : proposed_(size_t(std::max(max_positions, 1)), 0.0),
      accepted_(proposed_.size(), 0.0),
      prior_(proposed_.size(), -1.0) {
  if (!prior) return;
  for (size_t i = 0; i < prior_.size(); ++i)
    if (prior->observed(int32_t(i))) prior_[i] = prior->rate(int32_t(i));
}

void AcceptanceStats::record(int32_t proposed, int32_t accepted) {
  // Position i was tried when the ones before it were kept: i <= accepted, i < proposed.
  for (int32_t i = 0; i < proposed && i < int32_t(proposed_.size()); ++i) {
    if (i > accepted) break;
    proposed_[size_t(i)] += 1;
    if (i < accepted) accepted_[size_t(i)] += 1;
  }
}

bool AcceptanceStats::observed(int32_t position) const {
  const size_t i = std::min(size_t(std::max(position, 0)), proposed_.size() - 1);
  return proposed_[i] > 0;
}

double AcceptanceStats::rate(int32_t position) const {
  const size_t last = std::min(size_t(std::max(position, 0)), proposed_.size() - 1);
  double r = 0.5;
  for (size_t i = 0; i <= last; ++i) {  // each position's prior is the rate before it, unless given
    const double p = prior_[i] >= 0 ? prior_[i] : r;
    r = (accepted_[i] + 2.0 * p) / (proposed_[i] + 2.0);
  }
  return r;
}

std::vector<int32_t> choose_draft_lengths(const std::vector<DraftCandidate>& candidates, int64_t other_tokens,
                                          const StepCostModel& cost) {
  std::vector<int32_t> lengths(candidates.size(), 0);
  const double t1 = cost.slope();
  int64_t n = other_tokens + int64_t(candidates.size());  // every candidate decodes anyway
  double expected = double(n);                           // each decode yields a token
  if (t1 <= 0) return lengths;
  // Best next draft token first: a request's position i + 1 only after its position i.
  struct Next {
    double p;
    size_t request;
    bool operator<(const Next& o) const { return p < o.p; }
  };
  std::priority_queue<Next> queue;
  std::vector<double> kept(candidates.size(), 1.0);
  for (size_t r = 0; r < candidates.size(); ++r)
    if (candidates[r].max_tokens > 0 && candidates[r].stats) queue.push({candidates[r].stats->rate(0), r});
  while (!queue.empty()) {
    const Next next = queue.top();
    queue.pop();
    if (next.p / t1 <= expected / cost.predict(n)) break;  // the best left does not pay
    const size_t r = next.request;
    kept[r] = next.p;
    ++lengths[r];
    ++n;
    expected += next.p;
    if (lengths[r] < candidates[r].max_tokens) queue.push({kept[r] * candidates[r].stats->rate(lengths[r]), r});
  }
  return lengths;
}

int32_t choose_uniform_draft_length(const std::vector<const AcceptanceStats*>& requests, int64_t other_decodes,
                                    const StepCostModel& cost, double draft_pass_seconds, int32_t max_k) {
  const auto n = int64_t(requests.size()) + other_decodes;
  double best_rate = double(n) / cost.predict(n);
  int32_t best = 0;
  std::vector<double> kept(requests.size(), 1.0);
  double gain = 0;
  for (int32_t k = 1; k <= max_k; ++k) {
    for (size_t r = 0; r < requests.size(); ++r) gain += kept[r] *= requests[r]->rate(k - 1);
    const double seconds = cost.predict(n + int64_t(requests.size()) * k) + double(k) * draft_pass_seconds;
    const double rate = (double(n) + gain) / seconds;
    if (rate > best_rate) best_rate = rate, best = k;
  }
  return best;
}

}  // namespace ridge::spec
