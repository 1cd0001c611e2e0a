#pragma once
// The HTTP server on a free port of 127.0.0.1, serving a FakeBackend from a background thread,
// and small client helpers for the tests.
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fake_backend.h"
#include "serve/http_server.h"

namespace ridge::testing {

inline ServerConfig test_config() {
  ServerConfig c;
  c.port = 0;
  c.http_threads = 8;
  c.shutdown_grace = std::chrono::milliseconds(500);
  c.poll_interval = std::chrono::milliseconds(10);
  return c;
}

class TestServer {
 public:
  explicit TestServer(CompletionBackend& backend, ServerConfig config = test_config())
      : server_(backend, config), port_(server_.bind()), thread_([this] { server_.run(); }) {}
  ~TestServer() {
    server_.shutdown();
    thread_.join();
  }

  int port() const { return port_; }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10);
    return c;
  }
  HttpServer& server() { return server_; }

 private:
  HttpServer server_;
  int port_;
  std::thread thread_;
};

// POSTs a JSON body; the response, which must exist.
inline httplib::Result post_json(httplib::Client& client, const std::string& path, const nlohmann::json& body,
                                 const httplib::Headers& headers = {}) {
  return client.Post(path.c_str(), headers, body.dump(), "application/json");
}

// The data fields of a complete SSE body, checking the framing on the way: every event is one
// "data: " line followed by a blank line.
inline std::vector<std::string> sse_data(const std::string& body, bool* well_framed) {
  std::vector<std::string> out;
  *well_framed = true;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) {
      *well_framed = false;
      break;
    }
    const std::string event = body.substr(pos, end - pos);
    if (event.rfind("data: ", 0) != 0 || event.find('\n') != std::string::npos) *well_framed = false;
    out.push_back(event.substr(std::min<size_t>(6, event.size())));
    pos = end + 2;
  }
  return out;
}

}  // namespace ridge::testing
