#include "engine/sampling_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "kernels/cpu/exp_sum.h"

namespace ridge {
namespace {

// Sorting order of candidates: higher logit first, lower id on ties (so results never depend on
// the sort algorithm).
bool more_likely(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
}

}  // namespace

void apply_penalties(std::span<float> logits, std::span<const int32_t> history, const SamplingParams& params) {
  const bool any = params.repetition_penalty != 1.0f || params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f;
  if (!any || params.penalty_last_n == 0 || history.empty()) return;
  const size_t window = params.penalty_last_n < 0 ? history.size()
                                                  : std::min(history.size(), size_t(params.penalty_last_n));
  std::vector<int32_t> recent(history.end() - window, history.end());
  std::sort(recent.begin(), recent.end());
  for (size_t i = 0; i < recent.size();) {
    const int32_t token = recent[i];
    size_t count = 0;
    while (i < recent.size() && recent[i] == token) ++i, ++count;
    if (token < 0 || size_t(token) >= logits.size())
      fail("sampling: history token {} is outside the vocabulary of {} tokens", token, logits.size());
    float& logit = logits[token];
    // Dividing a negative logit would make the token more likely: multiply it instead.
    if (params.repetition_penalty != 1.0f)
      logit = logit > 0.0f ? logit / params.repetition_penalty : logit * params.repetition_penalty;
    logit -= float(count) * params.frequency_penalty + params.presence_penalty;
  }
}

int32_t argmax_token(std::span<const float> logits) {
  int32_t best = -1;
  float best_logit = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) fail("sampling: logit of token {} is NaN", i);
    if (logits[i] > best_logit) best_logit = logits[i], best = int32_t(i);
  }
  if (best < 0) fail("sampling: every one of the {} logits is -inf", logits.size());
  return best;
}

double log_sum_exp(std::span<const float> logits) {
  const float max = *std::max_element(logits.begin(), logits.end());
  return max + std::log(cpu::exp_sum(logits.data(), int64_t(logits.size()), max));
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t n, double lse) {
  std::vector<Candidate> finite = collect_candidates(logits, n, /*sorted=*/true);
  std::vector<TokenLogprob> top;
  top.reserve(finite.size());
  for (const auto& c : finite) top.push_back({c.token, float(double(c.logit) - lse)});
  return top;
}

std::vector<Candidate> collect_candidates(std::span<const float> logits, int32_t top_k, bool sorted) {
  std::vector<Candidate> candidates;
  candidates.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    if (std::isfinite(logits[i])) candidates.push_back({int32_t(i), logits[i]});
  if (top_k > 0 && size_t(top_k) < candidates.size()) {
    std::nth_element(candidates.begin(), candidates.begin() + top_k, candidates.end(), more_likely);
    candidates.resize(size_t(top_k));
    sorted = true;
  }
  if (sorted) std::sort(candidates.begin(), candidates.end(), more_likely);
  return candidates;
}

void keep_top_p(std::vector<Candidate>& candidates, float top_p) {
  if (top_p >= 1.0f || candidates.empty()) return;
  const float max = candidates.front().logit;
  double total = 0.0;
  for (const auto& c : candidates) total += std::exp(double(c.logit) - max);
  double mass = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    mass += std::exp(double(candidates[i].logit) - max) / total;
    if (mass >= top_p) {
      candidates.resize(i + 1);
      return;
    }
  }
}

void keep_min_p(std::vector<Candidate>& candidates, float min_p) {
  if (min_p <= 0.0f || candidates.empty()) return;
  float max = candidates.front().logit;
  for (const auto& c : candidates) max = std::max(max, c.logit);
  // p_i >= min_p * p_max  <=>  logit_i >= logit_max + log(min_p): no softmax needed.
  const double threshold = double(max) + std::log(double(min_p));
  std::erase_if(candidates, [&](const Candidate& c) { return double(c.logit) < threshold; });
}

int32_t draw_token(std::span<const Candidate> candidates, float temperature, double uniform) {
  if (candidates.empty()) fail("sampling: no candidate token left to draw from");
  float max = candidates.front().logit;
  for (const auto& c : candidates) max = std::max(max, c.logit);
  std::vector<double> weights(candidates.size());
  double total = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    weights[i] = std::exp((double(candidates[i].logit) - max) / temperature);
    total += weights[i];
  }
  const double target = uniform * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    cumulative += weights[i];
    if (target < cumulative) return candidates[i].token;
  }
  return candidates.back().token;  // rounding left `target` at the very top
}

}  // namespace ridge
