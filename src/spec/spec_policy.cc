#include "spec/spec_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <queue>

namespace ridge::spec {

void StepCostModel::observe(int64_t n_tokens, int64_t n_logit_rows, double seconds) {
  if (n_tokens <= 0 || !(seconds > 0)) return;
  points_.push_back({double(n_tokens), double(std::clamp<int64_t>(n_logit_rows, 0, n_tokens)), seconds});
  if (points_.size() > window_) points_.pop_front();
  fitted_ = false;
}

namespace {

struct Fit {
  double c[3] = {0, 0, 0};
  double residual = 0;
  bool ok = false;
};

// Least squares of t on the chosen columns of (1, n, r); not ok when singular or a coefficient < 0.
template <typename Points>
Fit least_squares(const Points& points, const bool use[3]) {
  int idx[3], m = 0;
  for (int j = 0; j < 3; ++j)
    if (use[j]) idx[m++] = j;
  double a[3][4] = {};
  for (const auto& p : points) {
    const double x[3] = {1.0, p.n, p.r};
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) a[i][j] += x[idx[i]] * x[idx[j]];
      a[i][3] += x[idx[i]] * p.t;
    }
  }
  Fit f;
  for (int col = 0; col < m; ++col) {  // Gauss-Jordan with partial pivoting
    int pivot = col;
    for (int i = col + 1; i < m; ++i)
      if (std::fabs(a[i][col]) > std::fabs(a[pivot][col])) pivot = i;
    if (std::fabs(a[pivot][col]) < 1e-12 * (1.0 + std::fabs(a[0][0]))) return f;
    for (int j = 0; j < 4; ++j) std::swap(a[col][j], a[pivot][j]);
    for (int i = 0; i < m; ++i) {
      if (i == col) continue;
      const double factor = a[i][col] / a[col][col];
      for (int j = col; j < 4; ++j) a[i][j] -= factor * a[col][j];
    }
  }
  for (int i = 0; i < m; ++i) {
    f.c[idx[i]] = a[i][3] / a[i][i];
    if (f.c[idx[i]] < 0) return f;
  }
  for (const auto& p : points) {
    const double e = f.c[0] + f.c[1] * p.n + f.c[2] * p.r - p.t;
    f.residual += e * e;
  }
  f.ok = true;
  return f;
}

}  // namespace

void StepCostModel::fit() const {
  fitted_ = true;
  t0_ = t1_ = t2_ = 0;
  if (points_.empty()) return;
  double lo = points_.front().n, hi = lo, sn = 0, st = 0;
  for (const Point& p : points_) lo = std::min(lo, p.n), hi = std::max(hi, p.n), sn += p.n, st += p.t;
  if (hi > lo) {
    // The full model, else the best non-negative one of fewer terms (rows == tokens on every step
    // leaves t2 unknown: their sum is what a decode or verify step needs).
    Fit best = least_squares(points_, std::array{true, true, true}.data());
    if (!best.ok)
      for (const std::array<bool, 3> use : {std::array{true, true, false}, std::array{true, false, true}}) {
        const Fit f = least_squares(points_, use.data());
        if (f.ok && (!best.ok || f.residual < best.residual)) best = f;
      }
    if (best.ok && best.c[0] + best.c[1] + best.c[2] > 0) {
      t0_ = best.c[0], t1_ = best.c[1], t2_ = best.c[2];
      return;
    }
  }
  // One size only: the bandwidth-bound prior, T(n) = T(mean) (1 + (n - mean) / 32) around the data.
  const double m = double(points_.size());
  const double mean_n = sn / m, mean_t = st / m;
  t1_ = mean_t / (32.0 + mean_n);
  t0_ = std::max(0.0, mean_t - t1_ * mean_n);
}

double StepCostModel::predict(int64_t n_tokens, int64_t n_logit_rows) const {
  if (!fitted_) fit();
  return t0_ + t1_ * double(n_tokens) + t2_ * double(n_logit_rows);
}

double StepCostModel::slope() const {
  if (!fitted_) fit();
  return t1_ + t2_;
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

int SpeculationSwitch::bucket_of(int64_t decoding) {
  int b = 0;
  while (b < 31 && (int64_t(2) << b) <= decoding) ++b;
  return b;  // 1: 0, 2-3: 1, 4-7: 2, ...
}

bool SpeculationSwitch::allowed(int64_t decoding) { return buckets_[size_t(bucket_of(decoding))].current_on; }

double SpeculationSwitch::rate(int64_t decoding, bool on) const {
  const Bucket& b = buckets_[size_t(bucket_of(decoding))];
  return on ? b.on.rate : b.off.rate;
}

void SpeculationSwitch::observe(int64_t decoding, int64_t tokens, double seconds) {
  Bucket& b = buckets_[size_t(bucket_of(decoding))];
  b.tokens += double(tokens);
  b.seconds += seconds;
  if (++b.steps < window_) return;
  if (b.seconds > 0) {
    Arm& arm = b.current_on ? b.on : b.off;
    const double r = b.tokens / b.seconds;
    arm.rate = arm.rate < 0 || b.exploring ? r : 0.7 * arm.rate + 0.3 * r;  // a re-try's old rate is stale
  }
  b.steps = 0, b.tokens = 0, b.seconds = 0;
  if (b.on.rate < 0) { b.current_on = true; return; }  // measure both first
  if (b.off.rate < 0) { b.current_on = false; return; }
  const bool best_on = b.on.rate >= b.off.rate;
  if (b.interval == 0) b.interval = explore_every_;
  if (b.exploring) {  // the re-try just measured: did the loser stay the loser?
    b.exploring = false;
    b.interval = best_on == !b.current_on ? std::min(b.interval * 2, 16 * explore_every_) : explore_every_;
  }
  if (++b.since_explore >= b.interval) {
    b.since_explore = 0;
    b.exploring = true;
    b.current_on = !best_on;
  } else {
    b.current_on = best_on;
  }
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
