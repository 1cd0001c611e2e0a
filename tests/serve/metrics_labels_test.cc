#include "serve/metrics_labels.h"

#include <gtest/gtest.h>

#include "prometheus_check.h"
#include "serve/model_router.h"
#include "serve/api_error.h"

namespace ridge::testing {
namespace {

const char* kText =
    "# HELP ridge:num_requests_running Requests running.\n"
    "# TYPE ridge:num_requests_running gauge\n"
    "ridge:num_requests_running 2\n"
    "# HELP ridge:e2e_request_latency_seconds Latency.\n"
    "# TYPE ridge:e2e_request_latency_seconds histogram\n"
    "ridge:e2e_request_latency_seconds_bucket{le=\"1\"} 3\n"
    "ridge:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 4\n"
    "ridge:e2e_request_latency_seconds_sum 2.5\n"
    "ridge:e2e_request_latency_seconds_count 4\n";

TEST(MergeModelMetrics, EverySampleGetsItsModelAndFamiliesStayTogether) {
  const std::string merged = merge_model_metrics({{"a", kText}, {"b", kText},
                                                  {"", "# TYPE ridge:model_loaded gauge\nridge:model_loaded{model_name=\"a\"} 1\n"}});
  const Exposition e = parse_exposition(merged);
  EXPECT_TRUE(e.bad_lines.empty()) << merged;
  EXPECT_EQ(e.samples.at("ridge:num_requests_running{model_name=\"a\"}"), 2);
  EXPECT_EQ(e.samples.at("ridge:num_requests_running{model_name=\"b\"}"), 2);
  EXPECT_EQ(e.samples.at("ridge:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"+Inf\"}"), 4);
  EXPECT_EQ(e.samples.at("ridge:e2e_request_latency_seconds_count{model_name=\"a\"}"), 4);
  EXPECT_EQ(e.samples.at("ridge:model_loaded{model_name=\"a\"}"), 1);
  // One TYPE line per family, and a family's samples right after it.
  size_t types = 0;
  for (size_t p = 0; (p = merged.find("# TYPE ridge:num_requests_running ", p)) != std::string::npos; ++p) ++types;
  EXPECT_EQ(types, 1u);
  const size_t a = merged.find("ridge:num_requests_running{model_name=\"a\"}");
  const size_t b = merged.find("ridge:num_requests_running{model_name=\"b\"}");
  const size_t next = merged.find("# HELP ridge:e2e_request_latency_seconds");
  EXPECT_LT(a, next);
  EXPECT_LT(b, next);
}

TEST(ModelChoice, KeepAliveDurations) {
  EXPECT_EQ(model_choice_of(R"({"model":"m"})").model, "m");
  EXPECT_FALSE(model_choice_of(R"({"model":"m"})").keep_alive);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":0})").keep_alive, 0);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":-1})").keep_alive, -1);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":"5m"})").keep_alive, 300);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":"1h30m"})").keep_alive, 5400);
  EXPECT_DOUBLE_EQ(*model_choice_of(R"({"keep_alive":"250ms"})").keep_alive, 0.25);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":"30"})").keep_alive, 30);
  EXPECT_EQ(*model_choice_of(R"({"keep_alive":"-1m"})").keep_alive, -60);
  for (const char* bad : {R"({"keep_alive":"soon"})", R"({"keep_alive":"5x"})", R"({"keep_alive":true})", R"({"keep_alive":"m"})"})
    EXPECT_THROW(model_choice_of(bad), ApiError) << bad;
  EXPECT_TRUE(model_choice_of("not json").model.empty());  // the API's parser says what is wrong
}

}  // namespace
}  // namespace ridge::testing
