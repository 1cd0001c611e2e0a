// Arrival schedules and the runner's concurrency, with a stand-in for the network.
#include "loadgen/load_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "loadgen/arrivals.h"

namespace ridge::loadgen {
namespace {

TEST(LoadgenArrivals, PoissonGapsAverageOneOverTheRate) {
  const auto t = arrival_times(20001, 4.0, Arrival::Poisson, 11);
  EXPECT_EQ(t.front(), 0.0);
  double sum_sq = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    ASSERT_GE(t[i], t[i - 1]);
    const double gap = t[i] - t[i - 1];
    sum_sq += (gap - 0.25) * (gap - 0.25);
  }
  EXPECT_NEAR(t.back() / 20000, 0.25, 0.25 * 0.03);
  EXPECT_NEAR(std::sqrt(sum_sq / 20000), 0.25, 0.25 * 0.05);  // exponential: stddev = mean
  EXPECT_EQ(arrival_times(50, 4.0, Arrival::Poisson, 11), arrival_times(50, 4.0, Arrival::Poisson, 11));
}

TEST(LoadgenArrivals, ConstantIsEvenAndInfinityIsAllAtOnce) {
  const auto even = arrival_times(5, 10.0, Arrival::Constant, 0);
  for (size_t i = 0; i < even.size(); ++i) EXPECT_NEAR(even[i], 0.1 * double(i), 1e-12);
  for (double t : arrival_times(5, INFINITY, Arrival::Poisson, 0)) EXPECT_EQ(t, 0.0);
  EXPECT_THROW(arrival_times(3, 0.0, Arrival::Poisson, 0), Error);
  EXPECT_THROW(parse_arrival("bursty"), Error);
}

TEST(LoadgenRunner, NeverHasMoreInFlightThanTheCap) {
  std::atomic<int> in_flight = 0, most = 0;
  const SendFn send = [&](const RequestSpec& r) {
    const int now = ++in_flight;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    --in_flight;
    RequestResult result;
    result.ok = true;
    result.output_tokens = r.max_tokens;
    return result;
  };
  std::vector<RequestSpec> requests(12);
  for (int i = 0; i < 12; ++i) requests[size_t(i)].max_tokens = i + 1;
  LoadShape shape;
  shape.max_concurrency = 3;
  int done = 0;
  const RunResult run = run_load(requests, shape, send, [&](const RequestResult&) { ++done; });
  EXPECT_EQ(done, 12);
  EXPECT_EQ(most.load(), 3);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(run.requests[size_t(i)].output_tokens, i + 1);  // kept in workload order
  EXPECT_GE(run.duration_s, 4 * 0.015 * 0.9);                                            // four waves of three
}

TEST(LoadgenRunner, SendsEachRequestWhenItIsDueAndSurvivesAThrow) {
  std::vector<RequestSpec> requests(4);
  requests[2].max_tokens = -1;  // the stand-in throws on this one
  const SendFn send = [](const RequestSpec& r) {
    if (r.max_tokens < 0) throw std::runtime_error("stand-in failure");
    RequestResult result;
    result.ok = true;
    return result;
  };
  LoadShape shape;
  shape.request_rate = 20;  // every 50 ms
  shape.arrival = Arrival::Constant;
  const RunResult run = run_load(requests, shape, send);
  for (size_t i = 0; i < 4; ++i) EXPECT_GE(run.requests[i].start_s, 0.05 * double(i) - 1e-3) << i;
  EXPECT_GE(run.duration_s, 0.15 - 1e-3);
  EXPECT_FALSE(run.requests[2].ok);
  EXPECT_EQ(run.requests[2].error, "stand-in failure");
  EXPECT_TRUE(run.requests[3].ok);
}

}  // namespace
}  // namespace ridge::loadgen
