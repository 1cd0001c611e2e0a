#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engine/sampling_steps.h"

namespace ridge {
namespace {

// 53 random bits -> a double in [0, 1), the same on every standard library (unlike
// std::uniform_real_distribution, whose algorithm is unspecified).
double next_uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace

void validate(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
    fail("sampling: temperature must be >= 0, got {}", p.temperature);
  if (p.top_k < 0) fail("sampling: top_k must be >= 0 (0 = off), got {}", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) fail("sampling: top_p must be in (0, 1], got {}", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) fail("sampling: min_p must be in [0, 1], got {}", p.min_p);
  if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0.0f)
    fail("sampling: repetition_penalty must be > 0, got {}", p.repetition_penalty);
  if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f))
    fail("sampling: presence_penalty must be in [-2, 2], got {}", p.presence_penalty);
  if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f))
    fail("sampling: frequency_penalty must be in [-2, 2], got {}", p.frequency_penalty);
  if (p.penalty_last_n < -1) fail("sampling: penalty_last_n must be >= -1 (-1 = all), got {}", p.penalty_last_n);
  if (p.top_logprobs < 0 || p.top_logprobs > 20) fail("sampling: top_logprobs must be in [0, 20], got {}", p.top_logprobs);
  for (const auto& [token, bias] : p.logit_bias) {
    if (token < 0) fail("sampling: logit_bias names token {}, which is not a token id", token);
    if (!(bias >= -100.0f && bias <= 100.0f)) fail("sampling: logit_bias of token {} must be in [-100, 100], got {}", token, bias);
  }
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { validate(params_); }

void Sampler::penalise(std::span<const float> logits, std::span<const int32_t> history) {
  if (logits.empty()) fail("sampling: empty logits");
  scratch_.assign(logits.begin(), logits.end());
  apply_penalties(scratch_, history, params_);
  for (const auto& [token, bias] : params_.logit_bias) {
    if (size_t(token) >= scratch_.size()) fail("sampling: logit_bias names token {}, outside the vocabulary of {}", token, scratch_.size());
    scratch_[size_t(token)] += bias;
  }
}

std::vector<Candidate> Sampler::candidates() const {
  std::vector<Candidate> c = collect_candidates(scratch_, params_.top_k, /*sorted=*/params_.top_p < 1.0f);
  keep_top_p(c, params_.top_p);
  keep_min_p(c, params_.min_p);
  return c;
}

void Sampler::fill_logprobs(SampleResult& result) const {
  const double lse = log_sum_exp(scratch_);
  result.logprob = float(double(scratch_[result.token]) - lse);
  if (params_.top_logprobs > 0) result.top = top_logprobs(scratch_, params_.top_logprobs, lse);
}

SampleResult Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  SampleResult result{};
  result.token = draw(logits, history);
  fill_logprobs(result);
  return result;
}

int32_t Sampler::draw(std::span<const float> logits, std::span<const int32_t> history) {
  penalise(logits, history);
  const int32_t argmax = argmax_token(scratch_);  // also rejects NaN and all-masked logits
  if (params_.temperature > 0.0f) return draw_token(candidates(), params_.temperature, next_uniform(rng_));
  return argmax;
}

SampleResult Sampler::sample_with_distribution(std::span<const float> logits, std::span<const int32_t> history,
                                              std::vector<float>& distribution) {
  penalise(logits, history);
  SampleResult result{};
  result.token = argmax_token(scratch_);
  distribution.assign(logits.size(), 0.0f);
  if (params_.temperature <= 0.0f) {
    distribution[size_t(result.token)] = 1.0f;
    return result;
  }
  const std::vector<Candidate> c = candidates();
  float max = c.front().logit;
  for (const Candidate& x : c) max = std::max(max, x.logit);
  double total = 0.0;
  std::vector<double> w(c.size());
  for (size_t i = 0; i < c.size(); ++i) total += w[i] = std::exp((double(c[i].logit) - max) / params_.temperature);
  for (size_t i = 0; i < c.size(); ++i) distribution[size_t(c[i].token)] = float(w[i] / total);
  result.token = draw_token(c, params_.temperature, next_uniform(rng_));
  return result;
}

Sampler::Verified Sampler::verify(std::span<const float> logits, std::span<const int32_t> history, int32_t draft,
                                  std::span<const float> draft_distribution) {
  penalise(logits, history);
  Verified v;
  v.result.token = argmax_token(scratch_);
  if (params_.temperature <= 0.0f) {
    v.accepted = v.result.token == draft;
    fill_logprobs(v.result);
    return v;
  }
  // p over the candidates that survive truncation, as draw_token would weigh them.
  std::vector<Candidate> c = candidates();
  float max = c.front().logit;
  for (const Candidate& x : c) max = std::max(max, x.logit);
  std::vector<double> p(c.size());
  double total = 0.0;
  for (size_t i = 0; i < c.size(); ++i) total += p[i] = std::exp((double(c[i].logit) - max) / params_.temperature);
  for (double& x : p) x /= total;
  const auto q = [&](int32_t token) {
    if (draft_distribution.empty()) return token == draft ? 1.0 : 0.0;  // one-hot (n-gram) draft
    return double(draft_distribution[size_t(token)]);
  };
  double p_draft = 0.0;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].token == draft) p_draft = p[i];
  const double q_draft = q(draft);
  if (p_draft > 0.0 && next_uniform(rng_) * q_draft < p_draft) {  // u < min(1, p/q)
    v.accepted = true;
    v.result.token = draft;
  } else {
    // The residual max(p - q, 0), renormalised: what p puts where the draft model put less.
    double residual_total = 0.0;
    for (size_t i = 0; i < c.size(); ++i) residual_total += p[i] = std::max(0.0, p[i] - q(c[i].token));
    if (residual_total <= 0.0) {  // p <= q everywhere: only the draft had mass (rounding); keep it
      v.accepted = p_draft > 0.0;
      v.result.token = v.accepted ? draft : c.front().token;
    } else {
      const double target = next_uniform(rng_) * residual_total;
      double cumulative = 0.0;
      v.result.token = c.back().token;
      for (size_t i = 0; i < c.size(); ++i) {
        cumulative += p[i];
        if (p[i] > 0.0 && target < cumulative) {
          v.result.token = c[i].token;
          break;
        }
      }
    }
  }
  fill_logprobs(v.result);
  return v;
}

}  // namespace ridge
