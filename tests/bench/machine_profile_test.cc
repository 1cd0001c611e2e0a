// The machine profile: save/load through $RIDGE_HOME and the per-thread lookup the benchmarks use.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bench/machine_profile.h"

namespace ridge::bench {
namespace {

TEST(MachineProfile, ValueAtThreadsFallsBackToTheNearestMeasuredCount) {
  const nlohmann::json p = {{"read_bandwidth_gbs", {{"1", 10.0}, {"2", 18.0}, {"8", 40.0}}}};
  EXPECT_EQ(profile_value_at_threads(p, "read_bandwidth_gbs", 2), 18.0);
  EXPECT_EQ(profile_value_at_threads(p, "read_bandwidth_gbs", 4), 18.0);   // largest below
  EXPECT_EQ(profile_value_at_threads(p, "read_bandwidth_gbs", 16), 40.0);
  const nlohmann::json high = {{"read_bandwidth_gbs", {{"4", 30.0}, {"2", 20.0}}}};
  EXPECT_EQ(profile_value_at_threads(high, "read_bandwidth_gbs", 1), 20.0);  // smallest above
  EXPECT_FALSE(profile_value_at_threads(p, "peak_f32_gflops", 1).has_value());
}

TEST(MachineProfile, SavesAndLoadsUnderRidgeHome) {
  const auto dir = std::filesystem::temp_directory_path() / ("ridge_profile_test_" + std::to_string(getpid()));
  const char* old = std::getenv("RIDGE_HOME");
  const std::string saved = old ? old : "";
  setenv("RIDGE_HOME", dir.c_str(), 1);
  EXPECT_FALSE(load_machine_profile().has_value());
  save_machine_profile({{"cpu", "test"}, {"cores", 2}});
  const auto loaded = load_machine_profile();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ((*loaded)["cores"], 2);
  std::ofstream(machine_profile_path()) << "{not json";
  EXPECT_FALSE(load_machine_profile().has_value());
  if (old) setenv("RIDGE_HOME", saved.c_str(), 1); else unsetenv("RIDGE_HOME");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ridge::bench
