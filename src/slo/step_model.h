#pragma once
// The time of an engine step, predicted from the planner's cost model and fitted online to the
// steps this engine measured. A step's roofline parts (all bytes at the probed bandwidth, GEMM
// FLOPs at the weights' peak, attention FLOPs at the activations' peak) are the features:
//   seconds = c0 + c1 memory_s + c2 gemm_compute_s + c3 attention_compute_s
// c0 is the fixed cost of a step, c1..c3 how far each part runs from its roof (1/efficiency). The
// fit is least squares on relative error over a window of recent steps, pulled towards a prior (the
// calibration of `ridge plan --validate`, else one per part) and kept non-negative, so a few
// steps of one shape cannot teach it nonsense about others.
#include <array>
#include <cstdint>
#include <deque>
#include <span>

#include "plan/ragged_cost.h"
#include "plan/roofline.h"

namespace ridge::slo {

using Coefficients = std::array<double, 4>;  // c0 (seconds), c1, c2, c3

class StepModel {
 public:
  StepModel(plan::RaggedCostModel cost, const plan::Overheads& calibration = {}, size_t window = 512);

  plan::RaggedStepCost cost(std::span<const plan::RunShape> runs) const { return cost_.cost(runs); }
  double predict(std::span<const plan::RunShape> runs) const { return predict(cost(runs)); }
  double predict(const plan::RaggedStepCost& c) const;
  // The predicted seconds of one stage of a step (its share of c0 by its part of the rest).
  std::array<double, 3> stage_seconds(const plan::RaggedStepCost& c, double measured_s) const;
  // Learns a measured step; returns what the model predicted for it before.
  double observe(const plan::RaggedStepCost& c, double seconds);
  void forget();  // back to the prior (after a warm-up whose first steps paid for page faults)
  // Drops the steps the current fit misses by far more than the rest (a step that lost the CPU to
  // another process, a page fault) and fits again; returns how many went. A step is an outlier
  // when |log(measured / predicted)| exceeds `k` times the window's median and log(1.5).
  size_t reject_outliers(double k = 3.0);
  // Mean |predicted - measured| / measured over the window with the current coefficients (in
  // sample), or with `c`.
  double fit_error() const { return error_with(coef_); }
  double error_with(const Coefficients& c) const;
  // Predicts with the prior (the planner's uncalibrated model) until the next refit.
  void use_prior() { coef_ = prior_; }

  const Coefficients& coefficients() const { return coef_; }
  const Coefficients& prior() const { return prior_; }
  int64_t observations() const { return observed_; }
  // Mean |predicted - measured| / measured over the window, predicted before each step was seen.
  double mean_relative_error() const;
  const plan::HardwareSpec& hardware() const { return cost_.hardware(); }
  const plan::RaggedCostModel& cost_model() const { return cost_; }

 private:
  static std::array<double, 4> features(const plan::RaggedStepCost& c);
  static double dot(const Coefficients& c, const std::array<double, 4>& x);
  void refit();

  plan::RaggedCostModel cost_;
  Coefficients prior_{}, coef_{};
  size_t window_;
  struct Point {
    std::array<double, 4> x;
    double seconds;
    double error;  // relative, before the point was fitted
  };
  std::deque<Point> points_;
  int64_t observed_ = 0;
};

// Solves min sum_i ((y_i - x_i.c) / d_i)^2 + lambda sum_j (s_j (c_j - prior_j))^2 with c >= 0,
// s_j the mean of x_ij / d_i, d_i = denom_i (y_i when denom is empty). Exposed for tests.
Coefficients fit_coefficients(std::span<const std::array<double, 4>> x, std::span<const double> y,
                              const Coefficients& prior, double lambda, std::span<const double> denom = {});

}  // namespace ridge::slo
