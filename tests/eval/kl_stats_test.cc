// KlStats against hand-computed values and the properties KL must have.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.h"
#include "eval/kl_stats.h"

namespace ridge::eval {
namespace {

TEST(KlStats, TwoTokenCaseByHand) {
  KlStats s;
  const std::vector<float> base = {0.0f, 0.0f};               // p = (1/2, 1/2)
  const std::vector<float> model = {std::log(3.0f), 0.0f};  // q = (3/4, 1/4)
  s.add(base, model, 1);
  const double kl = 0.5 * std::log(0.5 / 0.75) + 0.5 * std::log(0.5 / 0.25);
  EXPECT_NEAR(s.mean_kl(), kl, 1e-7);
  EXPECT_NEAR(s.base_perplexity(), 2.0, 1e-6);
  EXPECT_NEAR(s.model_perplexity(), 4.0, 1e-5);
  EXPECT_EQ(s.count(), 1);
  // Argmax of (0, 0) is token 0 (the first of the tie), as it is for the model.
  EXPECT_DOUBLE_EQ(s.top1_agreement(), 1.0);
}

TEST(KlStats, IdenticalAndShiftedLogitsHaveNoDivergence) {
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.f, 3.f);
  KlStats s;
  for (int r = 0; r < 20; ++r) {
    std::vector<float> a(1000), b(1000);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = g(rng);
      b[i] = a[i] + 7.5f;  // softmax is shift-invariant
    }
    s.add(a, b, r);
  }
  EXPECT_LT(s.mean_kl(), 1e-6);
  EXPECT_DOUBLE_EQ(s.top1_agreement(), 1.0);
  EXPECT_NEAR(s.base_perplexity(), s.model_perplexity(), 1e-3 * s.base_perplexity());
}

TEST(KlStats, QuantilesAndDisagreement) {
  KlStats s;
  std::vector<float> base = {2.0f, 0.0f, 0.0f};
  for (int i = 0; i < 99; ++i) s.add(base, base, 0);
  s.add(base, std::vector<float>{0.0f, 5.0f, 0.0f}, 0);  // one position where the model disagrees
  EXPECT_NEAR(s.top1_agreement(), 0.99, 1e-12);
  EXPECT_LT(s.kl_quantile(0.5), 1e-9);
  EXPECT_GT(s.max_kl(), 1.0);
  EXPECT_NEAR(s.mean_kl(), s.max_kl() / 100, 1e-9);
  EXPECT_GT(s.mean_kl_stderr(), 0.0);
}

TEST(KlStats, MismatchedInputsAreErrors) {
  KlStats s;
  EXPECT_THROW(s.add(std::vector<float>{1, 2}, std::vector<float>{1, 2, 3}, 0), Error);
  EXPECT_THROW(s.add(std::vector<float>{1, 2}, std::vector<float>{1, 2}, 2), Error);
  EXPECT_THROW(s.add(std::vector<float>{1, 2}, std::vector<float>{1, 2}, -1), Error);
}

}  // namespace
}  // namespace ridge::eval
