// The hand-made Prometheus registry: histogram buckets and quantiles, counters with labels,
// gauges, and text that a strict exposition reader accepts.
#include "serve/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "core/error.h"
#include "prometheus_check.h"

namespace ridge {
namespace {

TEST(MetricsHistogram, BucketsAreCumulativeWithInf) {
  Histogram h({0.1, 1.0, 10.0});
  for (double v : {0.05, 0.1, 0.5, 2.0, 20.0}) h.observe(v);
  const auto s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 3, 4, 5}));  // le=0.1 includes 0.1 itself
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.sum, 22.65);
}

TEST(MetricsHistogram, QuantileInterpolatesInsideTheBucket) {
  Histogram h({1.0, 2.0});
  for (int i = 0; i < 4; ++i) h.observe(1.5);
  const auto s = h.snapshot();
  EXPECT_DOUBLE_EQ(s.quantile(0.5), 1.5);  // rank 2 of 4 in (1, 2]
  EXPECT_DOUBLE_EQ(s.quantile(1.0), 2.0);
  EXPECT_TRUE(std::isnan(Histogram({1.0}).snapshot().quantile(0.5)));
}

TEST(MetricsHistogram, AssignTakesCountsKeptElsewhere) {
  Histogram h({0.1, 1.0});
  h.observe(5.0);
  h.assign({1, 0, 2}, 3.5);  // replaces what was observed
  const auto s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{1, 1, 3}));
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.sum, 3.5);
  EXPECT_THROW(h.assign({1, 2}, 0), Error);
}

TEST(MetricsHistogram, RejectsUnsortedBuckets) { EXPECT_THROW(Histogram({1.0, 0.5}), Error); }

TEST(MetricsHistogram, ThreadSafe) {
  Histogram h({1.0});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) h.observe(0.5);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.snapshot().count, 4000u);
}

TEST(MetricsRegistry, RendersValidExposition) {
  MetricsRegistry r;
  r.counter("ridge:requests_total", "Requests.", {{"reason", "stop"}}).add(3);
  r.counter("ridge:requests_total", "Requests.", {{"reason", "we\"ird\\"}}).add();
  r.gauge("ridge:usage_perc", "Usage.").set(0.25);
  auto& h = r.histogram("ridge:latency_seconds", "Latency.", {0.5, 1.0});
  h.observe(0.2);
  h.observe(0.7);
  h.observe(9);

  const std::string text = r.render();
  const auto e = testing::parse_exposition(text);
  EXPECT_TRUE(e.bad_lines.empty()) << text;
  EXPECT_EQ(e.types.at("ridge:requests_total"), "counter");
  EXPECT_EQ(e.types.at("ridge:usage_perc"), "gauge");
  EXPECT_EQ(e.types.at("ridge:latency_seconds"), "histogram");
  EXPECT_EQ(e.samples.at(R"(ridge:requests_total{reason="stop"})"), 3);
  EXPECT_EQ(e.samples.at(R"(ridge:requests_total{reason="we\"ird\\"})"), 1);
  EXPECT_EQ(e.samples.at("ridge:usage_perc"), 0.25);
  bool cumulative = false;
  EXPECT_EQ(testing::histogram_buckets(e, "ridge:latency_seconds", &cumulative), (std::vector<double>{1, 2, 3}));
  EXPECT_TRUE(cumulative);
  EXPECT_EQ(e.samples.at(R"(ridge:latency_seconds_bucket{le="+Inf"})"), 3);
  EXPECT_EQ(e.samples.at("ridge:latency_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(e.samples.at("ridge:latency_seconds_sum"), 9.9);
  // One HELP and TYPE per family, however many children.
  EXPECT_EQ(text.find("# TYPE ridge:requests_total"), text.rfind("# TYPE ridge:requests_total"));
}

TEST(MetricsRegistry, SameNameAndLabelsIsTheSameMetric) {
  MetricsRegistry r;
  Counter& a = r.counter("x_total", "x", {{"k", "v"}});
  EXPECT_EQ(&a, &r.counter("x_total", "x", {{"k", "v"}}));
  EXPECT_NE(&a, &r.counter("x_total", "x", {{"k", "w"}}));
  EXPECT_THROW(r.gauge("x_total", "x"), Error);
  EXPECT_THROW(r.counter("1bad", "x"), Error);
}

TEST(MetricsRecentSamples, PercentilesOfTheWindowOnly) {
  RecentSamples recent(std::chrono::seconds(10), 100);
  const auto t0 = RecentSamples::Clock::now();
  recent.add(100.0, t0);  // expires before the query
  for (int i = 1; i <= 100; ++i) recent.add(double(i), t0 + std::chrono::seconds(20));
  const auto p = recent.percentiles({0.5, 0.99}, t0 + std::chrono::seconds(21));
  EXPECT_EQ(p[0], 50.0);
  EXPECT_EQ(p[1], 99.0);
  EXPECT_TRUE(std::isnan(RecentSamples(std::chrono::seconds(1), 10).percentiles({0.5})[0]));
}

}  // namespace
}  // namespace ridge
