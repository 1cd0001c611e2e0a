// Requests against an in-process OpenAI-style server that streams with known delays, fails on
// purpose, or is not there: the timings, token counts and failures must come out as set up.
// Bounds are generous: the machine running the tests may be busy.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>

#include "loadgen/load_runner.h"
#include "loadgen/serve_metrics.h"
#include "loadgen/sse_client.h"

namespace ridge::loadgen {
namespace {

using nlohmann::json;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void write_event(httplib::DataSink& sink, const std::string& data) {
  const std::string event = "data: " + data + "\n\n";
  sink.write(event.data(), event.size());
}

// Streams max_tokens chunks: the first after ttft_ms, the others itl_ms apart, then usage (if on) and [DONE].
class FakeOpenAiServer {
 public:
  std::atomic<int> ttft_ms = 150, itl_ms = 50;
  std::atomic<bool> send_usage = true;

  FakeOpenAiServer() {
    server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { stream(req, res, false); });
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { stream(req, res, true); });
    server_.Post("/broken/v1/completions", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"boom","type":"server_error"}})", "application/json");
    });
    server_.Post("/stream-error/v1/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
        write_event(sink, R"({"choices":[{"text":"a"}]})");
        write_event(sink, R"({"error":{"message":"out of memory"}})");
        sink.done();
        return true;
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) sleep_ms(1);  // stop() before this point would be lost
  }
  ~FakeOpenAiServer() {
    server_.stop();
    thread_.join();
  }

  std::string url(const std::string& prefix = "") const { return "http://127.0.0.1:" + std::to_string(port_) + prefix; }
  json last_body() {
    std::lock_guard lock(mutex_);
    return last_body_;
  }
  std::string last_authorization() {
    std::lock_guard lock(mutex_);
    return last_authorization_;
  }

 private:
  void stream(const httplib::Request& req, httplib::Response& res, bool chat) {
    const json body = json::parse(req.body);
    {
      std::lock_guard lock(mutex_);
      last_body_ = body;
      last_authorization_ = req.get_header_value("Authorization");
    }
    const int n = body.value("max_tokens", 1);
    const int ttft = ttft_ms, itl = itl_ms;
    const bool usage = send_usage;
    res.set_chunked_content_provider("text/event-stream", [=, i = 0](size_t, httplib::DataSink& sink) mutable {
      if (i == 0 && chat) write_event(sink, R"({"choices":[{"delta":{"role":"assistant","content":""}}]})");
      if (i < n) {
        sleep_ms(i == 0 ? ttft : itl);
        const std::string word = " w" + std::to_string(i);
        write_event(sink, chat ? json{{"choices", {{{"delta", {{"content", word}}}}}}}.dump()
                               : json{{"choices", {{{"text", word}}}}}.dump());
        ++i;
        return true;
      }
      if (usage)
        write_event(sink, json{{"choices", json::array()}, {"usage", {{"prompt_tokens", 42}, {"completion_tokens", n}}}}.dump());
      write_event(sink, "[DONE]");
      sink.done();
      return true;
    });
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  json last_body_;
  std::string last_authorization_;
};

// A port nothing listens on: bound once by the kernel's choice, then closed.
int refused_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

RequestSpec request(int max_tokens) { return RequestSpec{"", "one two three", 3, max_tokens}; }

TEST(LoadgenFakeServer, MeasuresTtftAndInterTokenGapsOfAStream) {
  FakeOpenAiServer server;  // 150 ms to the first token, then 50 ms apart
  Endpoint e;
  e.base_url = server.url();
  e.model = "fake-model";
  e.api_key = "secret";
  const RequestResult r = send_streaming_request(e, request(5));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(r.ttft_s, 0.145);
  EXPECT_LT(r.ttft_s, 1.0);
  ASSERT_EQ(r.itl_s.size(), 4u);
  const double itl_sum = std::accumulate(r.itl_s.begin(), r.itl_s.end(), 0.0);
  EXPECT_GE(itl_sum, 0.15);  // the server waits at least 4 x 50 ms between the first and last chunk
  EXPECT_LT(itl_sum, 1.0);
  EXPECT_GE(r.e2e_s, r.ttft_s + itl_sum - 1e-9);
  EXPECT_EQ(r.output_tokens, 5);
  EXPECT_EQ(r.input_tokens, 42);  // the server's usage, not the estimate
  EXPECT_TRUE(r.usage_reported);
  EXPECT_NEAR(r.tpot_s(), (r.e2e_s - r.ttft_s) / 4, 1e-12);

  const json body = server.last_body();
  EXPECT_EQ(body["model"], "fake-model");
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(server.last_authorization(), "Bearer secret");
}

TEST(LoadgenFakeServer, ChatStreamsWithoutUsageCountChunks) {
  FakeOpenAiServer server;
  server.ttft_ms = 5;
  server.itl_ms = 2;
  server.send_usage = false;
  Endpoint e;
  e.base_url = server.url();
  e.api = ApiKind::Chat;
  const RequestResult r = send_streaming_request(e, request(6));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.output_tokens, 6);  // the empty role chunk is not a token
  EXPECT_EQ(r.itl_s.size(), 5u);
  EXPECT_EQ(r.input_tokens, 3);  // the workload's estimate
  EXPECT_FALSE(r.usage_reported);
  EXPECT_EQ(server.last_body()["messages"][0]["content"], "one two three");
}

TEST(LoadgenFakeServer, ServerErrorsStreamErrorsAndRefusedConnectionsAreFailures) {
  FakeOpenAiServer server;
  Endpoint e;
  e.base_url = server.url("/broken");
  RequestResult r = send_streaming_request(e, request(3));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "HTTP 500: boom");

  e.base_url = server.url("/stream-error");
  r = send_streaming_request(e, request(3));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "stream error: out of memory");

  e.base_url = server.url("/missing");
  r = send_streaming_request(e, request(3));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("HTTP 404", 0), 0u) << r.error;

  e.base_url = "http://127.0.0.1:" + std::to_string(refused_port());
  r = send_streaming_request(e, request(3));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot connect"), std::string::npos) << r.error;
}

TEST(LoadgenFakeServer, ASilentServerTimesOut) {
  FakeOpenAiServer server;
  server.ttft_ms = 600;
  Endpoint e;
  e.base_url = server.url();
  e.timeout_s = 0.15;
  const auto start = std::chrono::steady_clock::now();
  const RequestResult r = send_streaming_request(e, request(1));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("read failed"), std::string::npos) << r.error;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.55);
}

TEST(LoadgenFakeServer, ARunCountsCompletedAndFailedRequests) {
  FakeOpenAiServer server;
  server.ttft_ms = 10;
  server.itl_ms = 5;
  Endpoint good, refused;
  good.base_url = server.url();
  refused.base_url = "http://127.0.0.1:" + std::to_string(refused_port());
  const std::vector<RequestSpec> requests(8, request(4));
  LoadShape shape;
  shape.max_concurrency = 4;
  int call = 0;
  std::mutex mutex;
  const SendFn send = [&](const RequestSpec& r) {
    bool fail_this;
    {
      std::lock_guard lock(mutex);
      fail_this = call++ % 4 == 3;  // every fourth goes to a closed port
    }
    return send_streaming_request(fail_this ? refused : good, r);
  };
  const ServeSummary s = summarize(run_load(requests, shape, send), parse_slo("ttft=5s"));
  EXPECT_EQ(s.completed, 6);
  EXPECT_EQ(s.failed, 2);
  EXPECT_EQ(s.output_tokens, 24);
  EXPECT_EQ(s.input_tokens, 6 * 42);
  EXPECT_EQ(s.good_requests, 6);
  EXPECT_EQ(s.itl.count, 18u);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].second, 2);
  EXPECT_GT(s.output_throughput, 0);
}

}  // namespace
}  // namespace ridge::loadgen
