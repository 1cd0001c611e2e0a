#include "eval/kl_stats.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ridge::eval {

void log_softmax(std::span<const float> logits, std::vector<double>& out) {
  out.resize(logits.size());
  double max = -INFINITY;
  for (float v : logits) max = std::max(max, double(v));
  double sum = 0;
  for (float v : logits) sum += std::exp(double(v) - max);
  const double log_z = max + std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - log_z;
}

void KlStats::add(std::span<const float> base_logits, std::span<const float> model_logits, int32_t next_token) {
  if (base_logits.size() != model_logits.size())
    fail("the models' vocabularies differ ({} and {} logits)", base_logits.size(), model_logits.size());
  if (next_token < 0 || size_t(next_token) >= base_logits.size()) fail("token {} is outside the vocabulary", next_token);
  thread_local std::vector<double> p, q;
  log_softmax(base_logits, p);
  log_softmax(model_logits, q);
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
  kl_.push_back(std::max(0.0, kl));  // rounding can leave a tiny negative for identical rows
  const auto argmax = [](std::span<const float> v) { return std::max_element(v.begin(), v.end()) - v.begin(); };
  top1_same_ += argmax(base_logits) == argmax(model_logits);
  base_nll_ -= p[size_t(next_token)];
  model_nll_ -= q[size_t(next_token)];
}

double KlStats::mean_kl() const {
  if (kl_.empty()) return 0;
  double s = 0;
  for (double v : kl_) s += v;
  return s / double(kl_.size());
}

double KlStats::mean_kl_stderr() const {
  if (kl_.size() < 2) return 0;
  const double mean = mean_kl();
  double ss = 0;
  for (double v : kl_) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / double(kl_.size() - 1) / double(kl_.size()));
}

double KlStats::kl_quantile(double q) const {
  if (kl_.empty()) return 0;
  std::vector<double> sorted = kl_;
  std::sort(sorted.begin(), sorted.end());
  const size_t i = size_t(std::clamp(q, 0.0, 1.0) * double(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

double KlStats::top1_agreement() const { return kl_.empty() ? 0 : double(top1_same_) / double(kl_.size()); }
double KlStats::base_perplexity() const { return kl_.empty() ? 0 : std::exp(base_nll_ / double(kl_.size())); }
double KlStats::model_perplexity() const { return kl_.empty() ? 0 : std::exp(model_nll_ / double(kl_.size())); }

}  // namespace ridge::eval
