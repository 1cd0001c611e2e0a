// Speculative decoding's pieces: prompt lookup's proposals, the step-cost fit and the draft-length
// choice (drafts where decode is bandwidth-bound, none where the step is compute-bound), and the
// exactness of the sampler's rejection sampling: tokens verified against a draft are distributed
// exactly as plain sampling draws them (a chi-squared test over many seeded draws).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "engine/sampler.h"
#include "spec/ngram_proposer.h"
#include "spec/spec_policy.h"

namespace ridge::spec {
namespace {

TEST(NgramProposer, ProposesWhatFollowedTheLatestMatch) {
  const std::vector<int32_t> t = {1, 2, 3, 9, 1, 2, 3, 7, 8, 4, 1, 2, 3};
  EXPECT_EQ(propose_ngram(t, 2, {2, 4}), (std::vector<int32_t>{7, 8}));  // the latest "1 2 3" was followed by 7 8
  EXPECT_EQ(propose_ngram(t, 10, {2, 4}), (std::vector<int32_t>{7, 8, 4, 1, 2, 3}));
  EXPECT_TRUE(propose_ngram(std::vector<int32_t>{5, 6, 7}, 3, {1, 3}).empty());
  EXPECT_TRUE(propose_ngram(t, 0, {1, 3}).empty());
  EXPECT_EQ(propose_ngram(std::vector<int32_t>{4, 4}, 3, {1, 1}), (std::vector<int32_t>{4}));
}

TEST(StepCostModel, FitsInterceptAndSlope) {
  StepCostModel m;
  for (int n : {1, 2, 4, 8, 64, 1, 3})
    m.observe(n, 0.020 + 0.001 * n);
  EXPECT_NEAR(m.intercept(), 0.020, 1e-9);
  EXPECT_NEAR(m.slope(), 0.001, 1e-9);
  // Prefill chunks (many tokens, one logits row) beside decodes and verifies (a row per token): the
  // head's share of a verified token is found, and a draft token is priced with it.
  StepCostModel rows;
  for (int n : {1, 2, 4, 9, 1, 3})
    rows.observe(n, n, 0.020 + 0.001 * n + 0.0005 * n);
  for (int n : {64, 128, 300}) rows.observe(n, 1, 0.020 + 0.001 * n + 0.0005);
  EXPECT_NEAR(rows.intercept(), 0.020, 1e-9);
  EXPECT_NEAR(rows.slope(), 0.0015, 1e-9);
  EXPECT_NEAR(rows.predict(128, 1), 0.020 + 0.128 + 0.0005, 1e-9);
  EXPECT_NEAR(rows.predict(9), 0.020 + 9 * 0.0015, 1e-9);
  StepCostModel one;
  one.observe(1, 0.033);
  EXPECT_GT(one.slope(), 0.0);  // one size only: the bandwidth-bound prior
  EXPECT_NEAR(one.predict(1), 0.033, 1e-12);
}

// A request starts from the prior it is given (the pool of all requests' verifies), 1/2 without
// one, and its own verifies then pull it away.
TEST(AcceptanceStats, StartsFromThePooledRateAndLearnsItsOwn) {
  AcceptanceStats pooled(4);
  for (int i = 0; i < 200; ++i) pooled.record(3, 3);  // every draft kept
  EXPECT_GT(pooled.rate(0), 0.98);
  const AcceptanceStats fresh(4), informed(4, &pooled);
  EXPECT_DOUBLE_EQ(fresh.rate(0), 0.5);
  EXPECT_NEAR(informed.rate(0), pooled.rate(0), 1e-12);
  EXPECT_NEAR(informed.rate(2), pooled.rate(2), 1e-12);
  AcceptanceStats own(4, &pooled);
  for (int i = 0; i < 20; ++i) own.record(2, 0);  // this request's drafts are all rejected
  EXPECT_LT(own.rate(0), 0.15);
}

// A position no verify has tried looks like the one before it: a request that drafted one token at
// a time and had them all kept expects a second to be kept too (with 1/2 there, drafting stayed at
// one token forever).
TEST(AcceptanceStats, AnUntriedPositionTakesTheRateBeforeIt) {
  AcceptanceStats one_at_a_time(8);
  for (int i = 0; i < 100; ++i) one_at_a_time.record(1, 1);
  EXPECT_TRUE(one_at_a_time.observed(0));
  EXPECT_FALSE(one_at_a_time.observed(1));
  EXPECT_GT(one_at_a_time.rate(0), 0.97);
  EXPECT_NEAR(one_at_a_time.rate(1), one_at_a_time.rate(0), 1e-12);
  EXPECT_NEAR(one_at_a_time.rate(7), one_at_a_time.rate(0), 1e-12);
  AcceptanceStats rejected(8);
  for (int i = 0; i < 100; ++i) rejected.record(1, 0);
  EXPECT_LT(rejected.rate(3), 0.03);
  // The pooled prior counts only where the pool has seen the position.
  const AcceptanceStats informed(8, &one_at_a_time);
  EXPECT_NEAR(informed.rate(0), one_at_a_time.rate(0), 1e-12);
  EXPECT_NEAR(informed.rate(5), one_at_a_time.rate(0), 1e-12);
  // Drafting more then shows where acceptance really falls.
  AcceptanceStats learns(8);
  for (int i = 0; i < 100; ++i) learns.record(4, 2);  // positions 0, 1 kept, 2 rejected
  EXPECT_GT(learns.rate(1), 0.95);
  EXPECT_LT(learns.rate(2), 0.05);
  EXPECT_LT(learns.rate(3), 0.05) << "untried past a rejected position";
}

TEST(DraftLengths, SpeculateWhereBandwidthBoundNotWhereComputeBound) {
  AcceptanceStats good(8);
  for (int i = 0; i < 50; ++i) good.record(4, 4);  // drafts almost always right
  StepCostModel flat, linear;
  for (int n = 1; n <= 64; n *= 2) {
    flat.observe(n, 0.030 + 0.0002 * n);  // decode-like: more tokens cost little
    linear.observe(n, 0.001 * n);        // compute-bound: every token costs the same
  }
  const std::vector<DraftCandidate> one = {{4, &good}};
  EXPECT_EQ(choose_draft_lengths(one, 0, flat), (std::vector<int32_t>{4}));
  EXPECT_EQ(choose_draft_lengths(one, 0, linear), (std::vector<int32_t>{0}));
  AcceptanceStats bad(8);
  for (int i = 0; i < 200; ++i) bad.record(4, 0);
  EXPECT_EQ(choose_draft_lengths({{4, &bad}}, 0, flat)[0], 0) << "drafts that are never kept do not pay";
  EXPECT_GT(good.rate(0), 0.9);
  EXPECT_LT(bad.rate(0), 0.05);
}

// The token distribution of plain sampling, and of verify() against one-hot and model drafts.
std::map<int32_t, int> histogram(SamplingParams p, int draws, int32_t draft, const std::vector<float>& q, bool plain) {
  const std::vector<float> logits = {2.0f, 1.5f, 1.4f, 0.3f, -0.5f, -1.0f, 0.9f, 1.1f};
  std::map<int32_t, int> counts;
  p.seed = 1234;
  Sampler sampler(p);
  const std::vector<int32_t> history = {3, 3, 5};
  std::mt19937_64 draft_rng(99);
  std::discrete_distribution<int32_t> from_q(q.begin(), q.end());
  for (int i = 0; i < draws; ++i) {
    // A model draft is a draw from its q (exactness needs that); a one-hot draft is fixed.
    const int32_t guess = q.empty() ? draft : from_q(draft_rng);
    const int32_t token = plain ? sampler.sample(logits, history).token : sampler.verify(logits, history, guess, q).result.token;
    ++counts[token];
  }
  return counts;
}

// Pearson's chi-squared statistic of `observed` against `expected` frequencies.
double chi_squared(const std::map<int32_t, int>& observed, const std::map<int32_t, int>& expected, int draws) {
  double x2 = 0;
  for (const auto& [token, n] : expected) {
    const double e = double(n) / draws * draws;
    const auto it = observed.find(token);
    const double o = it == observed.end() ? 0 : it->second;
    if (e > 0) x2 += (o - e) * (o - e) / e;
  }
  return x2;
}

TEST(SpeculativeSampling, VerifiedTokensAreDistributedAsPlainSampling) {
  constexpr int kDraws = 60000;
  const std::vector<float> q = {0.05f, 0.05f, 0.5f, 0.1f, 0.1f, 0.1f, 0.05f, 0.05f};  // a draft model's guess
  // A draft whose head was cut to the first three tokens (spec/draft_model.h): no mass past them.
  const std::vector<float> q_cut = {0.2f, 0.3f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (float temperature : {0.3f, 0.7f, 1.0f}) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_p = 0.95f;
    p.top_k = 7;
    p.presence_penalty = 0.4f;  // applied identically to p in both paths
    const auto want = histogram(p, kDraws, 0, {}, /*plain=*/true);
    for (int32_t draft : {0, 2, 5}) {
      for (const std::vector<float>* draft_q : {static_cast<const std::vector<float>*>(nullptr), &q, &q_cut}) {
        const bool with_q = draft_q != nullptr;
        const auto got = histogram(p, kDraws, draft, with_q ? *draft_q : std::vector<float>{}, /*plain=*/false);
        // Two samples of one law: the statistic of both against their pooled frequencies is chi-squared
        // with (tokens - 1) <= 7 degrees of freedom; 18.48 is its 0.01 critical value (p > 0.01 passes).
        std::map<int32_t, int> pooled;
        for (const auto& [t, n] : want) pooled[t] += n;
        for (const auto& [t, n] : got) pooled[t] += n;
        std::map<int32_t, int> half;
        for (const auto& [t, n] : pooled) half[t] = n / 2;
        EXPECT_LT(chi_squared(got, half, kDraws) + chi_squared(want, half, kDraws), 18.48)
            << "temperature " << temperature << " draft " << draft
            << (!with_q ? " one-hot" : draft_q == &q ? " with q" : " with a cut head's q");
        for (const auto& [t, n] : got) EXPECT_TRUE(want.contains(t)) << "token " << t << " is outside p's support";
      }
    }
  }
}

TEST(SpeculativeSampling, GreedyAcceptsExactlyTheArgmax) {
  Sampler s(SamplingParams{});
  const std::vector<float> logits = {0.1f, 3.0f, 2.9f};
  EXPECT_TRUE(s.verify(logits, {}, 1).accepted);
  const auto v = s.verify(logits, {}, 2);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.result.token, 1);
}

}  // namespace
}  // namespace ridge::spec

namespace ridge::spec {
namespace {

// Runs `steps` steps of a load through the switch, speculation giving `on` tokens/s and plain
// decoding `off`; returns the share of steps it allowed speculation.
double share_on(SpeculationSwitch& s, int64_t decoding, double on, double off, int steps) {
  int allowed = 0;
  for (int i = 0; i < steps; ++i) {
    const bool a = s.allowed(decoding);
    allowed += a;
    s.observe(decoding, 10, 10.0 / (a ? on : off));
  }
  return double(allowed) / steps;
}

TEST(SpeculationSwitch, KeepsTheFasterArmPerLoadAndRetriesTheOther) {
  SpeculationSwitch s(16, 32);
  EXPECT_TRUE(s.allowed(1));  // speculation is tried first
  // At one request speculation pays; at eight it costs (a draft's catch-up, compute-bound verifies).
  EXPECT_GT(share_on(s, 1, 170.0, 100.0, 16 * 320), 0.95);
  EXPECT_LT(share_on(s, 8, 70.0, 100.0, 16 * 320), 0.05);
  EXPECT_NEAR(s.rate(1, true), 170.0, 1e-6);
  EXPECT_NEAR(s.rate(1, false), 100.0, 1e-6);
  EXPECT_NEAR(s.rate(9, false), 100.0, 1e-6) << "8..15 decoding requests share a bucket";
  EXPECT_LT(s.rate(64, true), 0.0) << "a load not seen yet has no measurement";
  // The losing arm is re-tried, less and less often while it keeps losing: over a long run at eight
  // requests, speculation costs next to nothing.
  EXPECT_LT(share_on(s, 8, 70.0, 100.0, 16 * 4000), 0.005);
  // When the load's costs change, the switch follows (within the back-off it reached).
  EXPECT_GT(share_on(s, 8, 150.0, 100.0, 16 * 4000), 0.8);
}

}  // namespace
}  // namespace ridge::spec
