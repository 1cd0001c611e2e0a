// Sampling: distributions drawn match the probabilities they should, truncation keeps exactly the
// tokens it should, penalties follow their formulas, a seed reproduces a run, logprobs add up.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <map>

#include "core/error.h"
#include "engine/sampling_steps.h"

namespace ridge {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Logits whose softmax is exactly `probs`.
std::vector<float> logits_for(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(p > 0 ? float(std::log(p)) : -kInf);
  return logits;
}

// Frequency of each token over `n` draws.
std::map<int32_t, double> draw_frequencies(const SamplingParams& params, std::span<const float> logits, int n) {
  Sampler sampler(params);
  std::map<int32_t, double> freq;
  for (int i = 0; i < n; ++i) freq[sampler.sample(logits, {}).token] += 1.0 / n;
  return freq;
}

const std::vector<double> kProbs = {0.1, 0.2, 0.3, 0.4};
constexpr int kDraws = 20000;
constexpr double kTolerance = 0.015;  // > 4 standard deviations at 20k draws

TEST(SamplingParams, ValidateRejectsOutOfRangeFields) {
  EXPECT_NO_THROW(validate(SamplingParams{}));
  auto rejects = [](auto edit) {
    SamplingParams p;
    edit(p);
    EXPECT_THROW(validate(p), Error);
    EXPECT_THROW(Sampler{p}, Error);
  };
  rejects([](SamplingParams& p) { p.temperature = -0.1f; });
  rejects([](SamplingParams& p) { p.temperature = NAN; });
  rejects([](SamplingParams& p) { p.top_k = -1; });
  rejects([](SamplingParams& p) { p.top_p = 0.0f; });
  rejects([](SamplingParams& p) { p.top_p = 1.5f; });
  rejects([](SamplingParams& p) { p.min_p = -0.1f; });
  rejects([](SamplingParams& p) { p.min_p = 1.1f; });
  rejects([](SamplingParams& p) { p.repetition_penalty = 0.0f; });
  rejects([](SamplingParams& p) { p.presence_penalty = 2.5f; });
  rejects([](SamplingParams& p) { p.frequency_penalty = -3.0f; });
  rejects([](SamplingParams& p) { p.penalty_last_n = -2; });
  rejects([](SamplingParams& p) { p.top_logprobs = 21; });
  try {
    SamplingParams p;
    p.top_p = 2.0f;
    validate(p);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos);
  }
}

TEST(Sampler, GreedyTakesArgmaxLowestIdOnTies) {
  Sampler sampler(SamplingParams{});
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 3.0f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sampler.sample(logits, {}).token, 1);
  EXPECT_EQ(argmax_token(std::vector<float>{-kInf, -kInf, 2.0f}), 2);
}

// draw() is sample() without log-probabilities: the same tokens from the same seed, step by step.
TEST(Sampler, DrawGivesTheTokensSampleGives) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_p = 0.9f;
  p.seed = 11;
  Sampler a(p), b(p);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(300);
  std::vector<int32_t> history;
  for (int step = 0; step < 200; ++step) {
    for (auto& v : logits) v = normal(rng);
    const int32_t token = a.sample(logits, history).token;
    ASSERT_EQ(b.draw(logits, history), token) << "step " << step;
    history.push_back(token);
  }
  Sampler greedy(SamplingParams{});
  EXPECT_EQ(greedy.draw(std::vector<float>{0.5f, 3.0f, -1.0f, 3.0f}, {}), 1);
  EXPECT_THROW(greedy.draw(std::vector<float>{1.0f, NAN}, {}), Error);
}

// logit_bias is added after penalties: a bias of +100 makes a token the argmax and its reported
// log-probability the biased distribution's; a token id outside the logits is an error.
TEST(Sampler, LogitBiasShiftsTheDistribution) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, -1.0f};
  SamplingParams p;
  p.logit_bias = {{3, 100.0f}, {0, -100.0f}};
  Sampler s(p);
  const SampleResult r = s.sample(logits, {});
  EXPECT_EQ(r.token, 3);
  EXPECT_NEAR(r.logprob, 0.0f, 1e-6f);
  p.logit_bias = {{1, 1.5f}};  // 1 + 1.5 > 2: token 1 wins by 0.5
  EXPECT_EQ(Sampler(p).sample(logits, {}).token, 1);
  p.logit_bias = {{4, 1.0f}};
  Sampler outside(p);
  EXPECT_THROW(outside.sample(logits, {}), Error);
  p.logit_bias = {{1, 101.0f}};
  EXPECT_THROW(Sampler{p}, Error);
}

TEST(Sampler, RejectsNanAndFullyMaskedLogits) {
  Sampler sampler(SamplingParams{});
  EXPECT_THROW(sampler.sample(std::vector<float>{1.0f, NAN}, {}), Error);
  EXPECT_THROW(sampler.sample(std::vector<float>{-kInf, -kInf}, {}), Error);
  EXPECT_THROW(sampler.sample(std::vector<float>{}, {}), Error);
}

TEST(Sampler, TemperatureOneDrawsTheModelDistribution) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 42;
  const auto freq = draw_frequencies(params, logits_for(kProbs), kDraws);
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(freq.count(t) ? freq.at(t) : 0.0, kProbs[t], kTolerance) << "token " << t;
}

TEST(Sampler, TemperatureSharpensTheDistribution) {
  SamplingParams params;
  params.temperature = 0.5f;  // p^(1/T) = p^2, renormalised
  params.seed = 7;
  const auto freq = draw_frequencies(params, logits_for(kProbs), kDraws);
  const double z = 0.01 + 0.04 + 0.09 + 0.16;
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(freq.at(t), kProbs[t] * kProbs[t] / z, kTolerance) << "token " << t;
}

TEST(Sampler, TopKDrawsOnlyTheKBestRenormalised) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_k = 2;
  params.seed = 1;
  const auto freq = draw_frequencies(params, logits_for(kProbs), kDraws);
  EXPECT_EQ(freq.size(), 2u);
  EXPECT_NEAR(freq.at(3), 0.4 / 0.7, kTolerance);
  EXPECT_NEAR(freq.at(2), 0.3 / 0.7, kTolerance);
}

TEST(Sampler, TopPAndMinPDrawOnlyKeptTokens) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_p = 0.65f;  // 0.4 + 0.3 reaches it
  params.seed = 3;
  auto freq = draw_frequencies(params, logits_for(kProbs), kDraws);
  EXPECT_EQ(freq.size(), 2u);
  EXPECT_NEAR(freq.at(3), 0.4 / 0.7, kTolerance);

  params.top_p = 1.0f;
  params.min_p = 0.6f;  // keeps p >= 0.24
  freq = draw_frequencies(params, logits_for(kProbs), kDraws);
  EXPECT_EQ(freq.size(), 2u);
  EXPECT_NEAR(freq.at(2), 0.3 / 0.7, kTolerance);
}

TEST(SamplingSteps, TopKKeepsBestSortedWithTiesByLowestId) {
  const std::vector<float> logits = {1.0f, 5.0f, 3.0f, 5.0f, -kInf, 2.0f};
  const auto top = collect_candidates(logits, 3, false);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_EQ(top[2].token, 2);
  EXPECT_EQ(collect_candidates(logits, 0, false).size(), 5u);  // -inf is never a candidate
  EXPECT_EQ(collect_candidates(logits, 100, true).size(), 5u);
}

TEST(SamplingSteps, TopPKeepsShortestPrefixReachingTheMass) {
  auto sorted = [] { return collect_candidates(logits_for(kProbs), 0, true); };
  auto candidates = sorted();
  keep_top_p(candidates, 0.75f);  // 0.4 + 0.3 < 0.75 <= 0.4 + 0.3 + 0.2
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[2].token, 1);
  candidates = sorted();
  keep_top_p(candidates, 0.01f);  // always at least one
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].token, 3);
  candidates = sorted();
  keep_top_p(candidates, 1.0f);
  EXPECT_EQ(candidates.size(), 4u);
}

TEST(SamplingSteps, MinPIsRelativeToTheBestToken) {
  auto candidates = collect_candidates(logits_for(kProbs), 0, false);
  keep_min_p(candidates, 0.45f);  // keeps p >= 0.18
  ASSERT_EQ(candidates.size(), 3u);
  for (const auto& c : candidates) EXPECT_NE(c.token, 0);
  keep_min_p(candidates, 1.0f);  // only the best survives
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].token, 3);
}

TEST(SamplingSteps, PenaltiesFollowTheirFormulas) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.0f};
  const std::vector<int32_t> history = {0, 1, 0};
  apply_penalties(logits, history, params);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 0.0f}));  // positive divided, negative multiplied

  params.repetition_penalty = 1.0f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  logits = {2.0f, -2.0f, 1.0f, 0.0f};
  apply_penalties(logits, history, params);
  EXPECT_FLOAT_EQ(logits[0], 2.0f - 2 * 0.5f - 0.25f);  // seen twice
  EXPECT_FLOAT_EQ(logits[1], -2.0f - 0.5f - 0.25f);     // seen once
  EXPECT_FLOAT_EQ(logits[2], 1.0f);

  params.penalty_last_n = 1;  // only the last token (0) counts, once
  logits = {2.0f, -2.0f, 1.0f, 0.0f};
  apply_penalties(logits, history, params);
  EXPECT_FLOAT_EQ(logits[0], 2.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f);

  params.penalty_last_n = 0;  // off
  logits = {2.0f, -2.0f, 1.0f, 0.0f};
  apply_penalties(logits, history, params);
  EXPECT_FLOAT_EQ(logits[0], 2.0f);

  params.penalty_last_n = -1;
  EXPECT_THROW(apply_penalties(logits, std::vector<int32_t>{7}, params), Error);
}

TEST(Sampler, RepetitionPenaltyChangesTheGreedyChoice) {
  SamplingParams params;
  params.repetition_penalty = 1.5f;
  Sampler sampler(params);
  const std::vector<float> logits = {3.0f, 2.5f};
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{0}).token, 1);  // 3 / 1.5 = 2 < 2.5
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{1}).token, 0);
}

TEST(Sampler, SeedReproducesARun) {
  SamplingParams params;
  params.temperature = 0.9f;
  params.top_k = 40;
  params.top_p = 0.95f;
  params.seed = 1234;
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(std::sin(double(i)) * 3.0);
  auto run = [&](uint64_t seed) {
    params.seed = seed;
    Sampler sampler(params);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 200; ++i) tokens.push_back(sampler.sample(logits, tokens).token);
    return tokens;
  };
  EXPECT_EQ(run(1234), run(1234));
  EXPECT_NE(run(1234), run(1235));
}

TEST(Sampler, LogprobsAreTheModelsBeforeTemperature) {
  SamplingParams params;
  params.temperature = 0.5f;
  params.top_k = 2;
  params.top_logprobs = 4;
  Sampler sampler(params);
  const auto result = sampler.sample(logits_for(kProbs), {});
  EXPECT_NEAR(result.logprob, std::log(kProbs[result.token]), 1e-5);
  ASSERT_EQ(result.top.size(), 4u);
  double total = 0.0;
  for (size_t i = 0; i < result.top.size(); ++i) {
    EXPECT_EQ(result.top[i].token, int32_t(3 - i));  // most likely first
    EXPECT_NEAR(result.top[i].logprob, std::log(kProbs[result.top[i].token]), 1e-5);
    if (i > 0) {
      EXPECT_LE(result.top[i].logprob, result.top[i - 1].logprob);
    }
    total += std::exp(result.top[i].logprob);
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Sampler, LogprobsSkipMaskedTokensAndReflectPenalties) {
  SamplingParams params;
  params.top_logprobs = 3;
  params.presence_penalty = 1.0f;
  Sampler sampler(params);
  const std::vector<float> logits = {0.0f, -kInf, 0.0f};
  const auto result = sampler.sample(logits, std::vector<int32_t>{0});
  EXPECT_EQ(result.token, 2);
  ASSERT_EQ(result.top.size(), 2u);
  const double z = std::log(1.0 + std::exp(-1.0));
  EXPECT_NEAR(result.top[0].logprob, -z, 1e-5);
  EXPECT_NEAR(result.top[1].logprob, -1.0 - z, 1e-5);
}

TEST(Sampler, MaskedTokensAreNeverDrawn) {
  SamplingParams params;
  params.temperature = 2.0f;
  const auto freq = draw_frequencies(params, std::vector<float>{-kInf, 0.0f, -kInf, 0.0f}, 2000);
  EXPECT_EQ(freq.count(0) + freq.count(2), 0u);
}

}  // namespace
}  // namespace ridge
