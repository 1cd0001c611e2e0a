// Percentiles, SLOs and goodput on hand-made results, and the shapes of the reports.
#include "loadgen/serve_report.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "loadgen/slo.h"
#include "loadgen/sweep_plot.h"

namespace ridge::loadgen {
namespace {

RequestResult done(double ttft, double e2e, int tokens, std::vector<double> itl = {}) {
  RequestResult r;
  r.ok = true;
  r.ttft_s = ttft;
  r.e2e_s = e2e;
  r.output_tokens = tokens;
  r.input_tokens = 10;
  r.itl_s = std::move(itl);
  r.usage_reported = true;
  return r;
}

RequestResult failed(const std::string& why) {
  RequestResult r;
  r.error = why;
  return r;
}

TEST(ServeReport, PercentilesInterpolateLikeNumpy) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  std::vector<double> hundred;
  for (int i = 1; i <= 101; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(percentile(hundred, 90), 91);
  const LatencyStats s = latency_stats({4, 1, 3, 2});  // unsorted in
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_EQ(latency_stats({}).count, 0u);
}

TEST(ServeReport, ParsesSlosWithUnits) {
  const Slo slo = parse_slo("ttft=1s,tpot=50ms,itl:40,e2e=2.5s");
  EXPECT_DOUBLE_EQ(*slo.ttft_s, 1.0);
  EXPECT_DOUBLE_EQ(*slo.tpot_s, 0.05);
  EXPECT_DOUBLE_EQ(*slo.itl_s, 0.04);
  EXPECT_DOUBLE_EQ(*slo.e2e_s, 2.5);
  EXPECT_FALSE(parse_slo("tpot=20ms").ttft_s);
  EXPECT_DOUBLE_EQ(parse_duration_s("250us"), 250e-6);
  for (const char* bad : {"", "ttft", "ttft=", "ttft=1h", "ttft=-1s", "latency=1s", "ttft=fast"})
    EXPECT_THROW(parse_slo(bad), Error) << bad;
}

TEST(ServeReport, GoodputCountsRequestsMeetingEveryBound) {
  RunResult run;
  run.duration_s = 2.0;
  run.requests = {
      done(0.1, 1.0, 10, {0.1, 0.1}),    // tpot 0.1: fails tpot
      done(0.2, 0.29, 10, {0.01}),       // tpot 0.01: good
      done(1.5, 1.59, 10),               // ttft too slow
      done(0.2, 0.29, 10, {0.01, 0.5}),  // longest gap over the itl bound
      done(0.3, 0.3, 1),                 // one token: no TPOT, good
      failed("HTTP 500: boom"),
      failed("HTTP 500: boom"),
      failed("timeout"),
  };
  const ServeSummary s = summarize(run, parse_slo("ttft=1s,tpot=50ms,itl=100ms"));
  EXPECT_EQ(s.completed, 5);
  EXPECT_EQ(s.failed, 3);
  EXPECT_EQ(s.good_requests, 2);
  EXPECT_DOUBLE_EQ(*s.goodput, 1.0);
  EXPECT_DOUBLE_EQ(s.request_throughput, 2.5);
  EXPECT_EQ(s.output_tokens, 41);
  EXPECT_DOUBLE_EQ(s.output_throughput, 20.5);
  EXPECT_DOUBLE_EQ(s.input_throughput, 25);
  EXPECT_EQ(s.tpot.count, 4u);  // the one-token request has none
  EXPECT_EQ(s.itl.count, 5u);   // pooled over requests
  ASSERT_EQ(s.errors.size(), 2u);
  EXPECT_EQ(s.errors[0].first, "HTTP 500: boom");
  EXPECT_EQ(s.errors[0].second, 2);
  EXPECT_FALSE(summarize(run, Slo{}).goodput);
}

TEST(ServeReport, TableJsonSweepAndPlot) {
  RunResult run;
  run.duration_s = 1.0;
  run.requests = {done(0.1, 0.5, 5, {0.1, 0.1, 0.1, 0.1}), failed("refused")};
  const ServeSummary s = summarize(run, parse_slo("ttft=200ms"));
  const std::string text = format_summary(s, "title");
  for (const char* needle : {"title", "1 completed, 1 failed", "TTFT", "TPOT", "ITL", "E2E", "goodput", "refused", "100.00"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  const auto j = summary_json(s);
  EXPECT_EQ(j["completed"], 1);
  EXPECT_DOUBLE_EQ(j["ttft_ms"]["p50"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["slo"]["ttft_ms"].get<double>(), 200.0);
  EXPECT_EQ(j["errors"][0]["message"], "refused");

  std::vector<SweepPoint> points = {{"rate", 1, s}, {"rate", INFINITY, s}};
  points[1].summary.output_throughput = 12;
  const std::string table = format_sweep(points);
  EXPECT_NE(table.find("inf"), std::string::npos) << table;
  EXPECT_NE(table.find("TTFT p99"), std::string::npos) << table;
  EXPECT_EQ(sweep_json(points)[1]["rate"], "inf");
  const std::string svg = sweep_svg(points, "a <title> & more");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;title&gt; &amp; more"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

}  // namespace
}  // namespace ridge::loadgen
