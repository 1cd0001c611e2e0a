// The communication model: the latency + bandwidth fit of `ridge probe --dist`, the TP / PP times
// the planner predicts from a fit, and the profile's "dist" entry reaching the plan.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "plan/comm_model.h"
#include "plan/hardware.h"
#include "plan/model_catalog.h"
#include "plan/scaling.h"

namespace ridge::plan {
namespace {

std::vector<double> probe_sizes() {
  std::vector<double> sizes;
  for (double b = 1024; b <= 16 * 1048576.0; b *= 4) sizes.push_back(b);
  return sizes;
}

TEST(CommModel, FitRecoversLatencyAndBandwidthOfExactTimings) {
  const std::vector<double> bytes = probe_sizes();
  std::vector<double> seconds;
  for (double b : bytes) seconds.push_back(3e-6 + b / 5e9);
  const CommFit f = fit_comm(bytes, seconds);
  EXPECT_NEAR(f.latency_s, 3e-6, 1e-12);
  EXPECT_NEAR(f.bandwidth, 5e9, 5e9 * 1e-9);
}

TEST(CommModel, FitKeepsTheLatencyUnderRelativeNoise) {
  // +-2% on every point: a plain least-squares intercept would move by ~2% of the 16 MiB time (60 µs).
  const std::vector<double> bytes = probe_sizes();
  std::vector<double> seconds;
  for (size_t i = 0; i < bytes.size(); ++i) seconds.push_back((2e-6 + bytes[i] / 8e9) * (i % 2 ? 1.02 : 0.98));
  const CommFit f = fit_comm(bytes, seconds);
  EXPECT_NEAR(f.latency_s, 2e-6, 0.2e-6);
  EXPECT_NEAR(f.bandwidth, 8e9, 8e9 * 0.05);
}

TEST(CommModel, FitClampsANegativeLatencyAndRejectsTooFewSizes) {
  const std::vector<double> bytes = {1e3, 1e6};
  const CommFit f = fit_comm(bytes, std::vector<double>{1e-9, 1e-3});  // intercept would be below 0
  EXPECT_EQ(f.latency_s, 0);
  EXPECT_GT(f.bandwidth, 0);
  EXPECT_THROW(fit_comm(std::vector<double>{1e3, 1e3}, std::vector<double>{1e-6, 1e-6}), Error);
  EXPECT_THROW(fit_comm(std::vector<double>{1e3}, std::vector<double>{1e-6}), Error);
}

TEST(CommModel, TpCommTimeFromAMeasuredFit) {
  // Measured with 2 ranks: 10 µs + bytes / 2 GB/s (algorithm bandwidth; at 2 ranks the bus
  // bandwidth is the same).
  const CommModel m = measured_comm_model({10e-6, 2e9}, {4e-6, 6e9}, 2, "shared memory", "test");
  const double hidden = 8 * 896 * 4.0;  // batch 8, n_embd 896, f32
  EXPECT_NEAR(tp_comm_seconds(m, 24, hidden, 2), 2 * 24 * (10e-6 + hidden / 2e9), 1e-15);
  // 4 ranks: a ring moves 2 (n-1)/n of the buffer over the same bus bandwidth.
  EXPECT_NEAR(tp_comm_seconds(m, 24, hidden, 4), 2 * 24 * (10e-6 + 1.5 * hidden / 2e9), 1e-15);
  EXPECT_EQ(tp_comm_seconds(m, 24, hidden, 1), 0);
  EXPECT_NEAR(pp_comm_seconds(m, hidden, 3), 2 * (4e-6 + hidden / 6e9), 1e-15);
}

TEST(CommModel, GenericModelIsTheRingOverTheLink) {
  const CommModel m = generic_comm_model(900e9, 5e-6);
  EXPECT_FALSE(m.measured);
  EXPECT_NEAR(all_reduce_seconds(m, 1e6, 8), 5e-6 + 2.0 * 7 / 8 * 1e6 / 900e9, 1e-15);
}

HardwareSpec small_cpu() {
  HardwareSpec h;
  h.kind = "cpu";
  h.name = "test cpu";
  h.memory_bytes = 64e9;
  h.memory_bw = 20e9;
  h.peak_f32 = 200e9;
  return h;
}

TEST(CommModel, ParallelDecodeUsesTheMeasuredFit) {
  PlanInputs in;
  in.spec = *named_model_spec("llama-3-8b");
  in.precision.kv = in.precision.activations = number_format("f32");
  in.hw = small_cpu();
  const ParallelDecode generic = parallel_decode(in, {2, 1, 1, 1}, 1, 0);
  in.hw.measured_comm = measured_comm_model({20e-6, 1e9}, {5e-6, 2e9}, 2, "shared memory", "test");
  const ParallelDecode measured = parallel_decode(in, {2, 1, 1, 1}, 1, 0);
  const double hidden = double(in.spec.n_embd) * 4;
  const double logits = double(in.spec.n_vocab) * 4;
  EXPECT_NEAR(measured.comm_s, tp_comm_seconds(*in.hw.measured_comm, in.spec.n_layer, hidden, 2) +
                                   send_seconds(*in.hw.measured_comm, logits / 2),
              1e-12);
  EXPECT_GT(measured.comm_s, generic.comm_s);
  // Two ranks on one host: each has half its bandwidth, so the split work takes as long as the whole.
  const ParallelDecode one = parallel_decode(in, {1, 1, 1, 1}, 1, 0);
  EXPECT_NEAR(measured.stage_s, one.stage_s, one.stage_s * 0.02);
}

TEST(CommModel, ProbeProfileDistEntryBecomesTheMeasuredModel) {
  const auto path = std::filesystem::temp_directory_path() / ("ridge_dist_profile_" + std::to_string(getpid()) + ".json");
  nlohmann::json p = {{"cpu", "test"}, {"read_bandwidth_gbs", {{"2", 20.0}}}, {"peak_f32_gflops", {{"2", 200.0}}}};
  std::ofstream(path) << p.dump();
  EXPECT_FALSE(hardware_from_probe_profile(path.string(), 2).measured_comm.has_value());
  p["dist"] = {{"transport", "network"}, {"ranks", 4},
               {"all_reduce", {{"fit", {{"latency_us", 12.0}, {"bandwidth_gbs", 3.0}}}}},
               {"send_recv", {{"fit", {{"latency_us", 6.0}, {"bandwidth_gbs", 4.0}}}}}};
  std::ofstream(path) << p.dump();
  const HardwareSpec h = hardware_from_probe_profile(path.string(), 2);
  ASSERT_TRUE(h.measured_comm.has_value());
  EXPECT_EQ(h.measured_comm->transport, "network");
  EXPECT_FALSE(h.measured_comm->shares_host);
  EXPECT_NEAR(h.measured_comm->all_reduce_bus.latency_s, 12e-6, 1e-15);
  EXPECT_NEAR(h.measured_comm->all_reduce_bus.bandwidth, 3e9 * 1.5, 1);  // bus = algorithm x 2 (4-1)/4
  EXPECT_NEAR(all_reduce_seconds(*h.measured_comm, 1e6, 4), 12e-6 + 1e6 / 3e9, 1e-15);
  EXPECT_NEAR(h.measured_comm->send_recv.bandwidth, 4e9, 1);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ridge::plan
