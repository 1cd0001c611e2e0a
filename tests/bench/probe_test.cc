// Smoke tests of the probe's parts on tiny sizes: every kernel this CPU supports runs and reports
// a positive rate, and the system description is filled in.
#include <gtest/gtest.h>

#include "bench/pinned_team.h"
#include "bench/probe_bandwidth.h"
#include "bench/probe_compute.h"
#include "bench/probe_system.h"

namespace ridge::bench {
namespace {

TEST(Probe, SystemDescriptionIsFilledIn) {
  const SystemInfo info = probe_system();
  EXPECT_FALSE(info.cpu.empty());
  EXPECT_GE(info.cores, 1);
  EXPECT_GT(info.memory_gib, 0.1);
  EXPECT_EQ(size_t(info.cores), allowed_cpus().size());
  for (const std::string& feature : info.isa) EXPECT_TRUE(cpu_has(feature)) << feature;
}

TEST(Probe, ReadBandwidthIsPositiveForEachThreadCount) {
  const ReadBuffer buffer(size_t(8) << 20, 2);
  for (int threads : {1, 2}) EXPECT_GT(read_bandwidth_gbs(buffer, threads), 0.0) << threads;
}

TEST(Probe, EverySupportedComputeKernelRuns) {
  for (const auto& kernels : {f32_kernels(), int8_kernels()}) {
    ASSERT_FALSE(kernels.empty());
    for (const ComputeKernel* k : kernels) EXPECT_GT(peak_gops(*k, 1, 0.005), 0.0) << k->name;
  }
}

TEST(Probe, PinnedTeamRunsEveryThreadOnce) {
  std::vector<int> ran(3, 0);
  const double seconds = run_pinned_team(3, [&](int i) { ran[size_t(i)] += 1; });
  EXPECT_EQ(ran, (std::vector<int>{1, 1, 1}));
  EXPECT_GE(seconds, 0.0);
}

}  // namespace
}  // namespace ridge::bench
