#pragma once
// Next-token agreement of a model with a base model, position by position, from both models'
// own logits: KL(base || model), top-1 agreement, and each model's negative log-likelihood of
// the true next token (their perplexities). The quantities llama-perplexity --kl-divergence
// reports, so the two tools' figures can be set side by side.
#include <cstdint>
#include <span>
#include <vector>

namespace ridge::eval {

class KlStats {
 public:
  // One position: both models' logits over the same vocabulary and the token that came next.
  void add(std::span<const float> base_logits, std::span<const float> model_logits, int32_t next_token);

  int64_t count() const { return int64_t(kl_.size()); }
  double mean_kl() const;
  double kl_quantile(double q) const;  // q in [0, 1]: 0.5 the median, 0.99 the 99th percentile
  double max_kl() const { return kl_quantile(1.0); }
  double top1_agreement() const;  // fraction of positions where both argmaxes agree
  double base_perplexity() const;
  double model_perplexity() const;
  // The standard error of mean_kl (sample standard deviation / sqrt(n)).
  double mean_kl_stderr() const;

 private:
  std::vector<double> kl_;
  int64_t top1_same_ = 0;
  double base_nll_ = 0, model_nll_ = 0;
};

// log softmax of `logits` into `out` (double, for the differences of nearly equal numbers).
void log_softmax(std::span<const float> logits, std::vector<double>& out);

}  // namespace ridge::eval
