#include "slo/step_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridge::slo {
namespace {

constexpr double kPriorWeight = 2.0;  // the prior counts as about two steps

// Gaussian elimination with partial pivoting on a small dense system; false when singular.
template <size_t N>
bool solve(std::array<std::array<double, N>, N> a, std::array<double, N> b, std::array<double, N>& out) {
  for (size_t col = 0; col < N; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < N; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < N; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < N; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  for (size_t i = N; i-- > 0;) {
    double v = b[i];
    for (size_t c = i + 1; c < N; ++c) v -= a[i][c] * out[c];
    out[i] = v / a[i][i];
  }
  return true;
}

}  // namespace

Coefficients fit_coefficients(std::span<const std::array<double, 4>> x, std::span<const double> y,
                              const Coefficients& prior, double lambda, std::span<const double> denom) {
  constexpr size_t N = 4;
  auto d = [&](size_t i) { return denom.empty() ? y[i] : denom[i]; };
  std::array<double, N> scale{};  // mean of x_ij / y_i: puts the prior on the data's scale
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < N; ++j) scale[j] += x[i][j] / d(i);
  for (size_t j = 0; j < N; ++j) scale[j] = x.empty() ? 0 : scale[j] / double(x.size());
  std::array<bool, N> free{};
  free.fill(true);
  Coefficients c = prior;
  for (int pass = 0; pass < int(N) + 1; ++pass) {
    std::array<std::array<double, N>, N> a{};
    std::array<double, N> b{};
    for (size_t i = 0; i < x.size(); ++i) {
      std::array<double, N> r{};  // the row divided by d_i, whose target is then y_i / d_i
      for (size_t j = 0; j < N; ++j) r[j] = x[i][j] / d(i);
      const double target = y[i] / d(i);
      for (size_t j = 0; j < N; ++j) {
        if (!free[j]) continue;  // clamped at zero
        b[j] += r[j] * target;
        for (size_t k = 0; k < N; ++k)
          if (free[k]) a[j][k] += r[j] * r[k];
      }
    }
    for (size_t j = 0; j < N; ++j) {
      if (!free[j]) {
        a[j] = {};
        a[j][j] = 1;
        b[j] = 0;
        continue;
      }
      const double w = lambda * std::max(scale[j] * scale[j], 1e-30);
      a[j][j] += w;
      b[j] += w * prior[j];
    }
    Coefficients next{};
    if (!solve(a, b, next)) return prior;
    bool negative = false;
    for (size_t j = 0; j < N; ++j)
      if (free[j] && next[j] < 0) free[j] = false, negative = true;
    c = next;
    if (!negative) break;
  }
  for (double& v : c) v = std::max(0.0, v);
  return c;
}

StepModel::StepModel(plan::RaggedCostModel cost, const plan::Overheads& calibration, size_t window)
    : cost_(std::move(cost)), window_(std::max<size_t>(window, 8)) {
  // Without measurements: the calibrated fixed cost, each part at its roof.
  prior_ = {calibration.per_step_s, 1.0, 1.0, 1.0};
  coef_ = prior_;
}

std::array<double, 4> StepModel::features(const plan::RaggedStepCost& c) {
  std::array<double, 4> x{1.0, 0, 0, 0};
  for (const plan::StageCost& s : c.stages) {
    x[1] += s.memory_s;
    x[2] += s.gemm_compute_s;
    x[3] += s.attention_compute_s;
  }
  return x;
}

double StepModel::dot(const Coefficients& c, const std::array<double, 4>& x) {
  double t = 0;
  for (size_t j = 0; j < x.size(); ++j) t += c[j] * x[j];
  return t;
}

double StepModel::predict(const plan::RaggedStepCost& c) const { return dot(coef_, features(c)); }

std::array<double, 3> StepModel::stage_seconds(const plan::RaggedStepCost& c, double measured_s) const {
  std::array<double, 3> part{};
  double total = 0;
  for (size_t s = 0; s < 3; ++s) {
    const plan::StageCost& st = c.stages[s];
    part[s] = coef_[1] * st.memory_s + coef_[2] * st.gemm_compute_s + coef_[3] * st.attention_compute_s;
    total += part[s];
  }
  for (double& p : part) p = total > 0 ? measured_s * p / total : measured_s / 3;
  return part;
}

double StepModel::observe(const plan::RaggedStepCost& c, double seconds) {
  const double predicted = predict(c);
  if (!(seconds > 0) || !std::isfinite(seconds)) return predicted;
  points_.push_back({features(c), seconds, std::abs(predicted - seconds) / seconds});
  if (points_.size() > window_) points_.pop_front();
  ++observed_;
  // A refit reads the whole window: after every step while it is young, then every fourth.
  if (observed_ <= 64 || observed_ % 4 == 0) refit();
  return predicted;
}

void StepModel::forget() {
  points_.clear();
  observed_ = 0;
  coef_ = prior_;
}

void StepModel::refit() {
  std::vector<std::array<double, 4>> x;
  std::vector<double> y;
  x.reserve(points_.size());
  y.reserve(points_.size());
  for (const Point& p : points_) x.push_back(p.x), y.push_back(p.seconds);
  // The prior weighs as much as kPriorWeight steps, whatever the window holds. Errors relative to
  // the measured times first (small steps count as much as big ones), then relative to that fit's
  // predictions: on a busy machine a step of one shape takes one time or a multiple of it (the CPU
  // lent away or not), and relative to y the fit leans to the fast mode; relative to the prediction
  // it takes the shape's mean.
  coef_ = fit_coefficients(x, y, prior_, kPriorWeight);
  std::vector<double> predicted(y.size());
  for (size_t i = 0; i < y.size(); ++i) predicted[i] = std::max(dot(coef_, x[i]), 0.25 * y[i]);
  coef_ = fit_coefficients(x, y, prior_, kPriorWeight, predicted);
}

size_t StepModel::reject_outliers(double k) {
  size_t dropped = 0;
  for (int round = 0; round < 3 && points_.size() >= 8; ++round) {
    std::vector<double> miss;
    miss.reserve(points_.size());
    for (const Point& p : points_) miss.push_back(std::abs(std::log(p.seconds / std::max(dot(coef_, p.x), 1e-12))));
    std::vector<double> sorted = miss;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double limit = std::max(k * sorted[sorted.size() / 2], std::log(1.5));
    std::deque<Point> kept;
    for (size_t i = 0; i < points_.size(); ++i)
      if (miss[i] <= limit) kept.push_back(points_[i]);
    if (kept.size() == points_.size() || kept.size() < 4) break;
    dropped += points_.size() - kept.size();
    points_ = std::move(kept);
    refit();
  }
  return dropped;
}

double StepModel::error_with(const Coefficients& c) const {
  if (points_.empty()) return 0;
  double sum = 0;
  for (const Point& p : points_) sum += std::abs(dot(c, p.x) - p.seconds) / p.seconds;
  return sum / double(points_.size());
}

double StepModel::mean_relative_error() const {
  if (points_.empty()) return 0;
  double sum = 0;
  for (const Point& p : points_) sum += p.error;
  return sum / double(points_.size());
}

}  // namespace ridge::slo
