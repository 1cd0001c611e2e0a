#include "slo/slo_governor.h"

#include <gtest/gtest.h>

#include "plan/model_catalog.h"

namespace ridge::slo {
namespace {

std::shared_ptr<StepModel> model() {
  plan::HardwareSpec hw;
  hw.memory_bw = 20e9;
  hw.peak_f32 = 4e11;
  return std::make_shared<StepModel>(plan::RaggedCostModel(*plan::named_model_spec("smollm2-135m"), plan::Precision{}, hw));
}

TEST(SloGovernor, ACascadeLowersTheCapAndCalmLiftsIt) {
  GovernorConfig c;
  c.max_num_seqs = 32;
  c.cascade_preemptions = 4;
  c.window_steps = 16;
  c.recovery_steps = 10;
  SloGovernor g(model(), c);
  EXPECT_EQ(g.max_running(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(g.on_step(1, 20));  // three preemptions: not yet a cascade
  EXPECT_TRUE(g.on_step(1, 20));                               // the fourth within the window
  EXPECT_EQ(g.max_running(), 15);                              // a quarter below what ran
  EXPECT_EQ(g.stats().cascades, 1);
  for (int i = 0; i < 4; ++i) g.on_step(1, 15);  // it goes on: lower again
  EXPECT_EQ(g.max_running(), 12);
  // Calm: one more every recovery_steps steps, until the cap is gone.
  int rises = 0;
  for (int i = 0; i < 10 * 40 && g.max_running() != 0; ++i) rises += g.on_step(0, 12);
  EXPECT_EQ(g.max_running(), 0);
  EXPECT_EQ(rises, 32 - 12);
}

TEST(SloGovernor, SpreadOutPreemptionsAreNoCascade) {
  GovernorConfig c;
  c.window_steps = 16;
  c.cascade_preemptions = 4;
  SloGovernor g(model(), c);
  for (int i = 0; i < 200; ++i) EXPECT_FALSE(g.on_step(i % 8 == 0 ? 1 : 0, 10));
  EXPECT_EQ(g.max_running(), 0);
}

TEST(SloGovernor, OffMeansNoCap) {
  GovernorConfig c;
  c.preemption_guard = false;
  SloGovernor g(model(), c);
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(g.on_step(3, 10));
  EXPECT_EQ(g.max_running(), 0);
}

}  // namespace
}  // namespace ridge::slo
