// The HTTP API against a scripted backend: response shapes, usage, n choices, logprobs, and the
// status code of every kind of failure (always OpenAI's JSON error shape, never a 500).
#include <gtest/gtest.h>

#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::FakeBackend;
using testing::FakeConfig;
using testing::post_json;
using testing::TestServer;

const json kChat = {{"model", "fake-model"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};

// The status and parsed body; the body must be JSON.
std::pair<int, json> post(TestServer& server, const std::string& path, const json& body, const httplib::Headers& headers = {}) {
  auto client = server.client();
  auto res = post_json(client, path, body, headers);
  if (!res) return {0, json()};
  return {res->status, json::parse(res->body)};
}

void expect_error_shape(const json& body) {
  ASSERT_TRUE(body.contains("error")) << body;
  const json& e = body["error"];
  EXPECT_TRUE(e["message"].is_string());
  EXPECT_TRUE(e["type"].is_string());
  EXPECT_TRUE(e.contains("param"));
  EXPECT_TRUE(e.contains("code"));
}

// A reply is the error expected: its status, OpenAI's shape, and the code and param when given.
void expect_error(const std::pair<int, json>& reply, int status, const char* code = nullptr, const char* param = nullptr) {
  EXPECT_EQ(reply.first, status) << reply.second;
  expect_error_shape(reply.second);
  if (code) {
    EXPECT_EQ(reply.second["error"]["code"], code);
  }
  if (param) {
    EXPECT_EQ(reply.second["error"]["param"], param);
  }
}

TEST(ServeHttp, CompletionShapeAndUsage) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions", {{"model", "fake-model"}, {"prompt", "Hello"}, {"max_tokens", 10}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_TRUE(body["created"].is_number_integer());
  EXPECT_EQ(body["model"], "fake-model");
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["index"], 0);
  EXPECT_EQ(body["choices"][0]["text"], "Hello, world!");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(body["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(body["usage"]["prompt_tokens"], 5);  // one token per byte in the fake
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
  EXPECT_EQ(body["usage"]["total_tokens"], 9);
  EXPECT_EQ(body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
}

TEST(ServeHttp, ChatShapeAndTemplate) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/chat/completions", kChat);
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hello, world!");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  // The fake's template "<user>Hi\n<assistant>" is 20 bytes.
  EXPECT_EQ(body["usage"]["prompt_tokens"], 20);
  ASSERT_EQ(backend.submitted().size(), 1u);
  EXPECT_EQ(backend.submitted()[0].prompt.size(), 20u);
  // Chat's default max_tokens is what the context leaves.
  EXPECT_EQ(backend.submitted()[0].max_tokens, 64 - 20);
}

TEST(ServeHttp, ParametersReachTheBackend) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions",
                             {{"prompt", {5, 6, 7}}, {"max_tokens", 3}, {"temperature", 0.5}, {"top_p", 0.8}, {"top_k", 7},
                              {"min_p", 0.1}, {"seed", 42}, {"stop", {"\n\n", "END"}}, {"ignore_eos", true},
                              {"presence_penalty", 0.25}, {"frequency_penalty", 0.5}, {"repetition_penalty", 1.2}});
  ASSERT_EQ(status, 200) << body;
  const auto opts = backend.submitted().at(0);
  EXPECT_EQ(opts.prompt, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(opts.max_tokens, 3);
  EXPECT_FLOAT_EQ(opts.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(opts.sampling.top_p, 0.8f);
  EXPECT_EQ(opts.sampling.top_k, 7);
  EXPECT_FLOAT_EQ(opts.sampling.min_p, 0.1f);
  EXPECT_EQ(opts.sampling.seed, 42u);
  EXPECT_EQ(opts.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(opts.ignore_eos);
  EXPECT_FLOAT_EQ(opts.sampling.presence_penalty, 0.25f);
  EXPECT_FLOAT_EQ(opts.sampling.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(opts.sampling.repetition_penalty, 1.2f);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");  // ignore_eos: the script runs to max_tokens
  EXPECT_EQ(body["usage"]["completion_tokens"], 3);
}

TEST(ServeHttp, StopStringEndsTheChoice) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions", {{"prompt", "x"}, {"stop", " world"}});
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body["choices"][0]["text"], "Hello,");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
}

TEST(ServeHttp, NChoicesWithSeedsAndIndices) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions", {{"prompt", "abc"}, {"n", 3}, {"seed", 10}});
  ASSERT_EQ(status, 200) << body;
  ASSERT_EQ(body["choices"].size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(body["choices"][i]["index"], i);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);        // the prompt counts once
  EXPECT_EQ(body["usage"]["completion_tokens"], 12);  // 4 per choice
  std::vector<uint64_t> seeds;
  for (const auto& o : backend.submitted()) seeds.push_back(o.sampling.seed);
  // The siblings wait for the first choice's prompt and share its KV blocks.
  EXPECT_EQ(backend.submitted()[0].after_prefill_of, -1);
  EXPECT_EQ(backend.submitted()[1].after_prefill_of, 1);
  EXPECT_EQ(backend.submitted()[2].after_prefill_of, 1);
  std::sort(seeds.begin(), seeds.end());
  EXPECT_EQ(seeds, (std::vector<uint64_t>{10, 11, 12}));
}

TEST(ServeHttp, CompletionLogprobsShape) {
  FakeBackend backend;
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions", {{"prompt", "x"}, {"logprobs", 2}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_TRUE(backend.submitted()[0].logprobs);
  EXPECT_EQ(backend.submitted()[0].sampling.top_logprobs, 2);
  const json& lp = body["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json({"Hello", ",", " world", "!"}));
  ASSERT_EQ(lp["token_logprobs"].size(), 4u);
  EXPECT_DOUBLE_EQ(lp["token_logprobs"][1].get<double>(), -0.5);
  EXPECT_EQ(lp["text_offset"], json({0, 5, 6, 12}));
  ASSERT_EQ(lp["top_logprobs"].size(), 4u);
  // The two alternatives (tokens 1000 and 1001: "Hello" and ",") plus the sampled token.
  EXPECT_EQ(lp["top_logprobs"][2].size(), 3u);
  EXPECT_TRUE(lp["top_logprobs"][2].contains(" world"));
}

TEST(ServeHttp, ChatLogprobsShape) {
  FakeBackend backend;
  TestServer server(backend);
  json body = kChat;
  body["logprobs"] = true;
  body["top_logprobs"] = 3;
  auto [status, out] = post(server, "/v1/chat/completions", body);
  ASSERT_EQ(status, 200) << out;
  const json& content = out["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 4u);
  EXPECT_EQ(content[0]["token"], "Hello");
  EXPECT_DOUBLE_EQ(content[0]["logprob"].get<double>(), -0.25);
  EXPECT_EQ(content[1]["bytes"], json({int(',')}));
  ASSERT_EQ(content[0]["top_logprobs"].size(), 3u);
  EXPECT_EQ(content[0]["top_logprobs"][1]["token"], ",");
  EXPECT_TRUE(content[0]["top_logprobs"][1]["bytes"].is_array());
}

TEST(ServeHttp, MaxTokensBeyondTheContextIsClamped) {
  FakeBackend backend(FakeConfig{.pieces = {"a", "b"}, .n_ctx = 8});
  TestServer server(backend);
  auto [status, body] = post(server, "/v1/completions", {{"prompt", "12345"}, {"max_tokens", 1000}, {"ignore_eos", true}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(backend.submitted()[0].max_tokens, 3);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 3);
}

TEST(ServeHttp, ContextLengthExceeded) {
  FakeBackend backend(FakeConfig{.n_ctx = 8});
  TestServer server(backend);
  expect_error(post(server, "/v1/completions", {{"prompt", "123456789"}}), 400, "context_length_exceeded", "prompt");
  expect_error(post(server, "/v1/chat/completions", kChat), 400, "context_length_exceeded", "messages");
  EXPECT_TRUE(backend.submitted().empty());
}

TEST(ServeHttp, BadRequests) {
  FakeBackend backend;
  TestServer server(backend);
  for (const json& bad : {json{{"prompt", "x"}, {"temperature", -1}}, json{{"prompt", "x"}, {"n", 0}},
                          json{{"prompt", "x"}, {"max_tokens", "ten"}}, json{{"prompt", {1, 5000}}},  // id beyond the vocabulary
                          json{{"prompt", ""}}, json{{"prompt", "x"}, {"stop", {1}}}}) {
    const auto reply = post(server, "/v1/completions", bad);
    expect_error(reply, 400);
    EXPECT_EQ(reply.second["error"]["type"], "invalid_request_error");
  }
  expect_error(post(server, "/v1/chat/completions", {{"messages", json::array()}}), 400, nullptr, "messages");
  expect_error(post(server, "/v1/chat/completions", {{"messages", kChat["messages"]}, {"logprobs", true}, {"top_logprobs", 21}}),
               400, nullptr, "top_logprobs");

  auto client = server.client();
  for (const std::string raw : {"{not json", "[]", "{\"prompt\": \"bad \xff utf8\"}", ""}) {
    auto res = client.Post("/v1/completions", raw, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << raw;
    expect_error_shape(json::parse(res->body));
  }
  EXPECT_TRUE(backend.submitted().empty());
}

TEST(ServeHttp, UnknownModelAndRoute) {
  FakeBackend backend;
  TestServer server(backend);
  expect_error(post(server, "/v1/completions", {{"model", "gpt-4"}, {"prompt", "x"}}), 404, "model_not_found", "model");

  auto client = server.client();
  for (const char* path : {"/v1/nothing", "/nope", "/v1/models/gpt-4"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404) << path;
    expect_error_shape(json::parse(res->body));
  }
  auto res = client.Get("/v1/completions");  // the route exists for POST only
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST(ServeHttp, BodyOverTheLimitIs413) {
  FakeBackend backend;
  auto config = testing::test_config();
  config.max_body_bytes = 4096;
  TestServer server(backend, config);
  expect_error(post(server, "/v1/completions", {{"prompt", std::string(5000, 'a')}}), 413);
}

TEST(ServeHttp, QueueFullIs429) {
  FakeBackend backend(FakeConfig{.max_live = 0});
  TestServer server(backend);
  expect_error(post(server, "/v1/completions", {{"prompt", "x"}}), 429, "queue_full");
}

TEST(ServeHttp, ApiKey) {
  FakeBackend backend;
  auto config = testing::test_config();
  config.api_key = "sesame";
  TestServer server(backend, config);
  const json request = {{"prompt", "x"}};
  EXPECT_EQ(post(server, "/v1/completions", request).first, 401);
  EXPECT_EQ(post(server, "/v1/completions", request, {{"Authorization", "Bearer wrong"}}).first, 401);
  EXPECT_EQ(post(server, "/v1/completions", request, {{"Authorization", "sesame"}}).first, 401);
  expect_error(post(server, "/v1/chat/completions", kChat), 401, "invalid_api_key");
  EXPECT_EQ(post(server, "/v1/completions", request, {{"Authorization", "Bearer sesame"}}).first, 200);

  auto client = server.client();
  EXPECT_EQ(client.Get("/v1/models")->status, 401);
  EXPECT_EQ(client.Get("/v1/models", {{"Authorization", "Bearer sesame"}})->status, 200);
  EXPECT_EQ(client.Get("/health")->status, 200);  // not under /v1
  EXPECT_TRUE(backend.submitted().size() == 1);
}

TEST(ServeHttp, ModelsHealthAndPage) {
  FakeBackend backend;
  TestServer server(backend);
  auto client = server.client();
  auto res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json models = json::parse(res->body);
  EXPECT_EQ(models["object"], "list");
  EXPECT_EQ(models["data"][0]["id"], "fake-model");
  EXPECT_EQ(models["data"][0]["object"], "model");
  EXPECT_EQ(models["data"][0]["max_model_len"], 64);
  EXPECT_EQ(client.Get("/v1/models/fake-model")->status, 200);
  EXPECT_EQ(client.Get("/health")->status, 200);

  res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/html"), std::string::npos);
  for (const char* id : {"id=\"prompt\"", "id=\"send\"", "id=\"output\"", "id=\"metrics\"", "/v1/chat/completions", "/metrics/json"})
    EXPECT_NE(res->body.find(id), std::string::npos) << id;
  EXPECT_EQ(res->body.find("http://"), std::string::npos);  // self-contained: nothing from elsewhere
  EXPECT_EQ(res->body.find("https://"), std::string::npos);
}

}  // namespace
}  // namespace ridge
