// Streaming and concurrency: SSE framing ending in [DONE], usage in the last chunk on request,
// choice indices, cancellation when the client goes away, many connections at once, timeouts and
// a graceful shutdown.
#include <gtest/gtest.h>

#include <atomic>

#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::FakeBackend;
using testing::FakeConfig;
using testing::post_json;
using testing::TestServer;

struct Streamed {
  int status = 0;
  std::string content_type;
  std::vector<json> chunks;  // parsed data, [DONE] excluded
  bool well_framed = false;
  bool done_last = false;  // "data: [DONE]" was the final event
};

Streamed stream(TestServer& server, const std::string& path, json body) {
  body["stream"] = true;
  auto client = server.client();
  auto res = post_json(client, path, body);
  Streamed out;
  if (!res) return out;
  out.status = res->status;
  out.content_type = res->get_header_value("Content-Type");
  const auto data = testing::sse_data(res->body, &out.well_framed);
  out.done_last = !data.empty() && data.back() == "[DONE]";
  for (const auto& d : data)
    if (d != "[DONE]") out.chunks.push_back(json::parse(d));
  return out;
}

TEST(ServeStream, CompletionChunksEndWithDone) {
  FakeBackend backend;
  TestServer server(backend);
  const auto s = stream(server, "/v1/completions", {{"prompt", "Hi"}});
  ASSERT_EQ(s.status, 200);
  EXPECT_NE(s.content_type.find("text/event-stream"), std::string::npos);
  EXPECT_TRUE(s.well_framed);
  EXPECT_TRUE(s.done_last);
  std::string text;
  std::string id;
  for (const auto& c : s.chunks) {
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_FALSE(c.contains("usage"));  // not asked for
    if (id.empty()) id = c["id"];
    EXPECT_EQ(c["id"], id);  // one id for the whole stream
    text += c["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello, world!");
  EXPECT_EQ(s.chunks.back()["choices"][0]["finish_reason"], "stop");
  for (size_t i = 0; i + 1 < s.chunks.size(); ++i) EXPECT_TRUE(s.chunks[i]["choices"][0]["finish_reason"].is_null());
}

TEST(ServeStream, ChatChunksRoleFirstAndUsageLast) {
  FakeBackend backend;
  TestServer server(backend);
  const auto s = stream(server, "/v1/chat/completions",
                        {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(s.status, 200);
  EXPECT_TRUE(s.well_framed);
  EXPECT_TRUE(s.done_last);
  ASSERT_GE(s.chunks.size(), 3u);
  EXPECT_EQ(s.chunks.front()["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  for (size_t i = 0; i + 1 < s.chunks.size(); ++i) {
    const json& c = s.chunks[i];
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_TRUE(c.contains("usage") && c["usage"].is_null());  // null until the last chunk
    if (c["choices"][0]["delta"].contains("content")) text += c["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello, world!");
  EXPECT_EQ(s.chunks[s.chunks.size() - 2]["choices"][0]["finish_reason"], "stop");
  const json& last = s.chunks.back();
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"]["prompt_tokens"], 20);
  EXPECT_EQ(last["usage"]["completion_tokens"], 4);
  EXPECT_EQ(last["usage"]["total_tokens"], 24);
}

TEST(ServeStream, NChoicesCarryTheirIndex) {
  FakeBackend backend;
  TestServer server(backend);
  const auto s = stream(server, "/v1/completions", {{"prompt", "Hi"}, {"n", 3}, {"logprobs", 1}});
  ASSERT_EQ(s.status, 200);
  std::vector<std::string> texts(3);
  std::vector<int> finished(3, 0);
  for (const auto& c : s.chunks) {
    const int index = c["choices"][0]["index"];
    ASSERT_GE(index, 0);
    ASSERT_LT(index, 3);
    texts[size_t(index)] += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) ++finished[size_t(index)];
    if (!c["choices"][0]["text"].get<std::string>().empty()) {
      EXPECT_EQ(c["choices"][0]["logprobs"]["tokens"].size(), 1u);
    }
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(texts[size_t(i)], "Hello, world!");
    EXPECT_EQ(finished[size_t(i)], 1);
  }
}

TEST(ServeStream, ErrorsBeforeTheStreamAreJson) {
  FakeBackend backend;
  TestServer server(backend);
  const auto s = stream(server, "/v1/completions", {{"prompt", "Hi"}, {"temperature", -3}});
  EXPECT_EQ(s.status, 400);
}

TEST(ServeStream, ClientDisconnectCancelsAtOnce) {
  // Endless, slow tokens: only a cancel can end the request.
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(20)});
  TestServer server(backend);
  auto client = server.client();
  std::atomic<int> chunks{0};
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  req.body = json{{"prompt", "Hi"}, {"stream", true}, {"ignore_eos", true}, {"max_tokens", 10000}}.dump();
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };  // then hang up
  client.send(req);
  const auto closed = std::chrono::steady_clock::now();
  EXPECT_TRUE(backend.wait_for_cancels(1, std::chrono::seconds(2)));
  EXPECT_LT(std::chrono::steady_clock::now() - closed, std::chrono::seconds(1));
  for (int i = 0; i < 100 && backend.live() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(backend.live(), 0u);
}

TEST(ServeStream, QuietStreamNoticesDisconnect) {
  // The first token is far away: the handler is waiting, not writing, when the client leaves.
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(5000)});
  TestServer server(backend);
  auto client = server.client();
  client.set_read_timeout(0, 200'000);  // the client gives up after 200 ms
  auto res = post_json(client, "/v1/completions", {{"prompt", "Hi"}, {"stream", true}});
  EXPECT_FALSE(res);
  client.stop();
  EXPECT_TRUE(backend.wait_for_cancels(1, std::chrono::seconds(2)));
}

TEST(ServeStream, NonStreamedClientDisconnectCancels) {
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(20)});
  TestServer server(backend);
  auto client = server.client();
  client.set_read_timeout(0, 200'000);  // gives up (and closes) long before 10000 tokens
  EXPECT_FALSE(post_json(client, "/v1/completions", {{"prompt", "Hi"}, {"ignore_eos", true}, {"max_tokens", 10000}}));
  client.stop();
  EXPECT_TRUE(backend.wait_for_cancels(1, std::chrono::seconds(2)));
}

TEST(ServeStream, TimeoutCancels) {
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(5000)});
  auto config = testing::test_config();
  config.request_timeout = std::chrono::milliseconds(100);
  TestServer server(backend, config);
  auto client = server.client();
  auto res = post_json(client, "/v1/completions", {{"prompt", "Hi"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "timeout");
  EXPECT_TRUE(backend.wait_for_cancels(1, std::chrono::seconds(1)));

  const auto s = stream(server, "/v1/completions", {{"prompt", "Hi"}});
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.done_last);
  ASSERT_FALSE(s.chunks.empty());
  EXPECT_EQ(s.chunks.back()["error"]["code"], "timeout");
  EXPECT_TRUE(backend.wait_for_cancels(2, std::chrono::seconds(1)));
}

TEST(ServeStream, TwoHundredConcurrentConnectionsAllAnswered) {
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(1)});
  auto config = testing::test_config();
  config.http_threads = 64;
  TestServer server(backend, config);
  constexpr int kClients = 200;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      auto client = server.client();
      client.set_connection_timeout(5);
      const json body = {{"prompt", "Hi"}, {"stream", i % 2 == 0}, {"max_tokens", 4}};
      auto res = post_json(client, "/v1/completions", body);
      if (res && res->status == 200 && res->body.find(i % 2 == 0 ? "[DONE]" : "\"finish_reason\":\"stop\"") != std::string::npos)
        ++ok;
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients);
  EXPECT_EQ(backend.submitted().size(), size_t(kClients));
}

TEST(ServeStream, ShutdownLetsInFlightFinishAndRefusesNewRequests) {
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(50)});
  auto server = std::make_unique<TestServer>(backend);
  std::thread request([&] {
    auto client = server->client();
    auto res = post_json(client, "/v1/completions", {{"prompt", "Hi"}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);  // finished within the grace period
    EXPECT_EQ(json::parse(res->body)["choices"][0]["finish_reason"], "stop");
  });
  while (backend.live() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread stopper([&] { server->server().shutdown(); });  // drains, then stops
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  {
    auto client = server->client();
    auto res = post_json(client, "/v1/completions", {{"prompt", "Hi"}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 503);
  }
  stopper.join();
  request.join();
  server.reset();
  EXPECT_EQ(backend.cancels(), 0);
}

TEST(ServeStream, ShutdownCancelsWhatOutlivesTheGrace) {
  FakeBackend backend(FakeConfig{.token_delay = std::chrono::milliseconds(20)});
  auto config = testing::test_config();
  config.shutdown_grace = std::chrono::milliseconds(100);
  auto server = std::make_unique<TestServer>(backend, config);
  auto client = server->client();
  std::thread request([&] {
    auto res = post_json(client, "/v1/completions", {{"prompt", "Hi"}, {"ignore_eos", true}, {"max_tokens", 50}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 503);
  });
  while (backend.live() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  request.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(backend.cancels(), 1);
}

TEST(ServeStream, ShutdownDoesNotWaitForIdleKeepAliveConnections) {
  FakeBackend backend;
  auto server = std::make_unique<TestServer>(backend);
  auto client = server->client();
  client.set_keep_alive(true);  // the connection stays open, idle, after each response
  for (int i = 0; i < 2; ++i) {
    auto res = client.Get("/health");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
  const auto start = std::chrono::steady_clock::now();
  server.reset();  // shutdown() and the end of run(); httplib's keep-alive wait alone is 5 s
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace ridge
