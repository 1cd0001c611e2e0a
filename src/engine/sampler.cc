#include "engine/sampler.h"

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
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { validate(params_); }

SampleResult Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  if (logits.empty()) fail("sampling: empty logits");
  scratch_.assign(logits.begin(), logits.end());
  apply_penalties(scratch_, history, params_);

  SampleResult result{};
  result.token = argmax_token(scratch_);  // also rejects NaN and all-masked logits
  if (params_.temperature > 0.0f) {
    std::vector<Candidate> candidates =
        collect_candidates(scratch_, params_.top_k, /*sorted=*/params_.top_p < 1.0f);
    keep_top_p(candidates, params_.top_p);
    keep_min_p(candidates, params_.min_p);
    result.token = draw_token(candidates, params_.temperature, next_uniform(rng_));
  }

  const double lse = log_sum_exp(scratch_);
  result.logprob = float(double(scratch_[result.token]) - lse);
  if (params_.top_logprobs > 0) result.top = top_logprobs(scratch_, params_.top_logprobs, lse);
  return result;
}

}  // namespace ridge
