#pragma once
// The OpenAI-compatible HTTP front of `ridge serve`:
//   POST /v1/completions, POST /v1/chat/completions (JSON, or SSE with "stream": true)
//   POST /v1/embeddings, /v1/rerank, /v1/score (an embedding model's, serve/embeddings_route.h)
//   GET  /v1/models, /health, /metrics (Prometheus), /metrics/json (the web page's view), / (the web page)
// httplib's thread pool serves the connections; each completion handler submits to the backend and
// waits on its own RequestStream, so the backend's thread never waits on HTTP. Every failure is a
// JSON error in OpenAI's shape; bad input never yields a 500.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "loadgen/slo.h"
#include "serve/completion_backend.h"

namespace ridge {

class EmbeddingService;
class ModelRouter;
class LoraAdapters;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;             // 0: any free port (see bind())
  std::string api_key;         // non-empty: /v1 routes need "Authorization: Bearer <key>"
  // CORS: origins whose pages may call the API ("*": any); empty: no CORS headers, so browsers
  // keep other origins' pages out.
  std::vector<std::string> allowed_origins;
  int http_threads = 64;       // connections served at once; more wait in the accept queue
  std::chrono::milliseconds request_timeout{600'000};
  std::chrono::milliseconds shutdown_grace{30'000};  // in-flight requests may finish within it
  size_t max_body_bytes = 8u << 20;                  // larger bodies get 413
  std::chrono::milliseconds poll_interval{50};       // how often a waiting handler checks its connection
  // /metrics names start "<prefix>:" ("vllm": a vLLM dashboard or a KV-aware router reads ridge unchanged).
  std::string metrics_prefix = "ridge";
  loadgen::Slo slo;  // goodput: finished requests are counted as meeting or missing each objective
  // HTTPS (both set): the certificate chain and private key, PEM files; empty: plain HTTP.
  std::string ssl_certfile;
  std::string ssl_keyfile;
};

class HttpServer {
 public:
  HttpServer(CompletionBackend& backend, ServerConfig config);  // one model
  HttpServer(ModelRouter& router, ServerConfig config);         // many (serve/registry_router); must outlive it
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; returns the port (the chosen one when config.port is 0).
  // Error when the address cannot be bound.
  int bind();
  // One more POST route (before bind()), for the engine's own peers (a prefill instance's K/V
  // route): the handler gets the body and whether the client has hung up, returns (status, JSON).
  using PostHandler = std::function<std::pair<int, std::string>(const std::string& body, const std::function<bool()>& client_gone)>;
  void add_post(const std::string& path, PostHandler handler);
  void add_get(const std::string& path, std::function<std::string()> json_body);
  // The embedding model that answers /v1/embeddings, /v1/rerank and /v1/score (before bind()); it
  // is listed in /v1/models beside the backend's model when `listed`. Without one those routes
  // say the server has no embedding model.
  void set_embeddings(EmbeddingService* service, bool listed = true);
  // The model's LoRA adapters, served by name (before bind(); a one-model server only).
  void set_lora(LoraAdapters* adapters);
  // Serves until shutdown() has finished. Call bind() first.
  void run();
  // From any thread (a signal watcher): refuse new requests (503), let in-flight ones finish within
  // the grace period, cancel the rest, then stop listening. Returns once run() is about to return.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ridge
