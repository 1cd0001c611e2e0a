// The operational basics of the HTTP server: CORS for the origins --allowed-origins names (a preflight
// answered without the API key, the real request's headers), none for the others or without the
// flag; X-Request-Id echoed or made; the priority field read.
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/openai_request.h"
#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using namespace testing;  // FakeBackend, FakeConfig, TestServer, post_json, test_config

const httplib::Headers kPreflight = {{"Origin", "https://app.example"},
                                     {"Access-Control-Request-Method", "POST"},
                                     {"Access-Control-Request-Headers", "authorization, content-type"}};

TEST(ServeCors, AnAllowedOriginGetsAPreflightAndHeaders) {
  FakeBackend backend(FakeConfig{});
  ServerConfig config = testing::test_config();
  config.allowed_origins = {"https://app.example"};
  config.api_key = "k";
  TestServer server(backend, config);
  auto client = server.client();
  auto pre = client.Options("/v1/chat/completions", kPreflight);
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);  // no API key needed: browsers send none on a preflight
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Headers"), "authorization, content-type");
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  auto res = post_json(client, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}},
                       {{"Origin", "https://app.example"}, {"Authorization", "Bearer k"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(res->get_header_value("Vary"), "Origin");
  // Another origin: no CORS headers at all, so its page cannot read the answer.
  auto other = client.Options("/v1/chat/completions", {{"Origin", "https://evil.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
}

TEST(ServeCors, NoFlagNoHeadersAndAStarForAny) {
  FakeBackend backend(FakeConfig{});
  {
    TestServer server(backend);
    auto client = server.client();
    auto res = post_json(client, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 1}}, {{"Origin", "https://app.example"}});
    ASSERT_TRUE(res);
    EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  }
  ServerConfig config = testing::test_config();
  config.allowed_origins = {"*"};
  TestServer server(backend, config);
  auto client = server.client();
  auto pre = client.Options("/tokenize", kPreflight);
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_FALSE(pre->has_header("Vary"));
}

TEST(ServeRequestId, EchoedOrMade) {
  FakeBackend backend(FakeConfig{});
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 1}}, {{"X-Request-Id", "trace-42"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("X-Request-Id"), "trace-42");
  auto made = client.Get("/health");
  ASSERT_TRUE(made);
  EXPECT_EQ(made->get_header_value("X-Request-Id").rfind("req-", 0), 0u) << made->get_header_value("X-Request-Id");
  auto other = client.Get("/health");
  EXPECT_NE(other->get_header_value("X-Request-Id"), made->get_header_value("X-Request-Id"));
  // Unprintable bytes and overlong ids are trimmed, not echoed.
  auto odd = client.Get("/health", {{"X-Request-Id", "a b\tc" + std::string(300, 'x')}});
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->get_header_value("X-Request-Id"), "abc" + std::string(125, 'x'));
}

TEST(OpenaiRequestPriority, ReadAndChecked) {
  EXPECT_EQ(parse_openai_request(Endpoint::Completions, R"({"prompt": "x", "priority": -3})").priority, -3);
  EXPECT_EQ(parse_openai_request(Endpoint::Completions, R"({"prompt": "x"})").priority, 0);
  EXPECT_THROW(parse_openai_request(Endpoint::Completions, R"({"prompt": "x", "priority": "high"})"), ApiError);
  EXPECT_THROW(parse_openai_request(Endpoint::Completions, R"({"prompt": "x", "priority": 1e12})"), ApiError);
}

}  // namespace
}  // namespace ridge
