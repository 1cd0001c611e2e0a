// GET /metrics and /metrics/json after real traffic: every line is valid exposition text, the
// histograms are cumulative and count each finished request once, and the engine's counters are
// mirrored.
#include <gtest/gtest.h>

#include "prometheus_check.h"
#include "serve/serve_metrics.h"
#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::FakeBackend;
using testing::post_json;
using testing::TestServer;

TEST(ServeMetrics, PrometheusTextAfterRequests) {
  FakeBackend backend;
  TestServer server(backend);
  auto client = server.client();
  constexpr int kRequests = 5;
  for (int i = 0; i < kRequests; ++i) {
    auto res = post_json(client, "/v1/completions", {{"prompt", "Hello"}, {"stream", i % 2 == 1}, {"max_tokens", i == 0 ? 2 : 16}});
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
  }
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  const auto e = testing::parse_exposition(res->body);
  EXPECT_TRUE(e.bad_lines.empty()) << e.bad_lines.front();

  for (const char* h : {"ridge:time_to_first_token_seconds", "ridge:e2e_request_latency_seconds"}) {
    EXPECT_EQ(e.types.at(h), "histogram");
    bool cumulative = false;
    const auto buckets = testing::histogram_buckets(e, h, &cumulative);
    EXPECT_TRUE(cumulative) << h;
    ASSERT_FALSE(buckets.empty());
    EXPECT_EQ(buckets.back(), kRequests) << h;  // le="+Inf"
    EXPECT_EQ(e.samples.at(std::string(h) + "_count"), kRequests) << h;
  }
  // Four tokens per request but the first (max_tokens 2): 3 + 4 * 3 gaps between tokens.
  EXPECT_EQ(e.samples.at("ridge:inter_token_latency_seconds_count"), 1 + 4 * 3);
  EXPECT_EQ(e.types.at("ridge:request_queue_time_seconds"), "histogram");
  EXPECT_EQ(e.samples.at(R"(ridge:request_success_total{finished_reason="stop"})"), kRequests - 1);
  EXPECT_EQ(e.samples.at(R"(ridge:request_success_total{finished_reason="length"})"), 1);
  EXPECT_EQ(e.samples.at(R"(ridge:request_success_total{finished_reason="abort"})"), 0);
  EXPECT_EQ(e.samples.at("ridge:prompt_tokens_total"), 5 * kRequests);
  EXPECT_EQ(e.samples.at("ridge:generation_tokens_total"), 2 + 4 * (kRequests - 1));
  // Mirrored from the backend's stats.
  EXPECT_EQ(e.samples.at("ridge:num_preemptions_total"), 3);
  EXPECT_EQ(e.samples.at("ridge:prefix_cache_queries_total"), 10);
  EXPECT_EQ(e.samples.at("ridge:prefix_cache_hits_total"), 4);
  EXPECT_EQ(e.samples.at("ridge:kv_cache_blocks_total"), 100);
  for (const char* g : {"ridge:num_requests_running", "ridge:num_requests_waiting", "ridge:kv_cache_usage_perc",
                        "ridge:kv_cache_blocks_used", "ridge:kv_evictions_total"})
    EXPECT_TRUE(e.samples.count(g)) << g;
}

TEST(ServeMetrics, JsonViewForThePage) {
  FakeBackend backend;
  TestServer server(backend);
  auto client = server.client();
  ASSERT_EQ(post_json(client, "/v1/completions", {{"prompt", "Hello"}})->status, 200);
  auto res = client.Get("/metrics/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json m = json::parse(res->body);
  EXPECT_EQ(m["model"], "fake-model");
  EXPECT_EQ(m["generation_tokens_total"], 4);
  EXPECT_EQ(m["requests"]["stop"], 1);
  EXPECT_TRUE(m["ttft_seconds"]["p50"].is_number());
  EXPECT_TRUE(m["itl_seconds"]["p99"].is_number());
  EXPECT_EQ(m["kv_blocks_total"], 100);
  for (const char* k : {"running", "waiting", "kv_cache_usage", "batch_seqs", "batch_tokens", "uptime_seconds"})
    EXPECT_TRUE(m.contains(k)) << k;
}

// A MoE engine's expert counts appear per expert, with the imbalance gauge, in both views; a dense
// engine shows neither.
TEST(ServeMetrics, ExpertTokenCountsOfAMoeEngine) {
  ServeMetrics metrics;
  EngineStats dense;
  EXPECT_EQ(metrics.prometheus(dense).find("moe_expert"), std::string::npos);
  EngineStats moe;
  moe.moe_expert_tokens = {3, 0, 7};
  moe.moe_layer_imbalance = 2.1;
  const auto e = testing::parse_exposition(metrics.prometheus(moe));
  EXPECT_TRUE(e.bad_lines.empty());
  const std::string text = metrics.prometheus(moe);
  EXPECT_NE(text.find("ridge:moe_expert_tokens_total{expert=\"2\"} 7"), std::string::npos) << text;
  EXPECT_NE(text.find("ridge:moe_expert_imbalance 2.1"), std::string::npos);
  const json j = metrics.json(moe);
  EXPECT_EQ(j["moe"]["expert_tokens"], json({3, 0, 7}));
}

TEST(ServeMetrics, DisconnectCountsAsAbort) {
  testing::FakeConfig config;
  config.token_delay = std::chrono::milliseconds(5000);
  FakeBackend backend(config);
  TestServer server(backend);
  {
    auto client = server.client();
    client.set_read_timeout(0, 100'000);
    EXPECT_FALSE(post_json(client, "/v1/completions", {{"prompt", "Hi"}, {"stream", true}}));
  }
  ASSERT_TRUE(backend.wait_for_cancels(1, std::chrono::seconds(2)));
  // The handler counts the abort right after it cancels; give it a moment.
  auto client = server.client();
  double aborted = 0;
  for (int i = 0; i < 100 && aborted == 0; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    aborted = testing::parse_exposition(client.Get("/metrics")->body).samples.at(R"(ridge:request_success_total{finished_reason="abort"})");
  }
  EXPECT_EQ(aborted, 1);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(MetricsPrefix, RenamesEveryNameAndNothingElse) {
  const std::string text =
      "# HELP ridge:num_requests_waiting Requests queued (ridge: the engine).\n"
      "# TYPE ridge:num_requests_waiting gauge\n"
      "ridge:num_requests_waiting 3\n"
      "ridge:request_success_total{finished_reason=\"ridge:x\"} 1\n";
  EXPECT_EQ(with_metrics_prefix(text, "ridge"), text);
  EXPECT_EQ(with_metrics_prefix(text, "vllm"),
            "# HELP vllm:num_requests_waiting Requests queued (ridge: the engine).\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            "vllm:num_requests_waiting 3\n"
            "vllm:request_success_total{finished_reason=\"ridge:x\"} 1\n");
  EXPECT_EQ(with_metrics_prefix("", "vllm"), "");
  EXPECT_EQ(with_metrics_prefix("ridge:a 1", "vllm"), "vllm:a 1");  // no final newline
}

}  // namespace
}  // namespace ridge
