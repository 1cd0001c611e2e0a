#include "serve/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.h"
#include "serve/anthropic_request.h"
#include "serve/api_error.h"
#include "serve/completion_job.h"
#include "serve/embeddings_route.h"
#include "serve/connection_watch.h"
#include "serve/inflight.h"
#include "serve/random_id.h"
#include "serve/response_store.h"
#include "serve/response_writer.h"
#include "serve/responses_request.h"
#include "serve/serve_metrics.h"
#include "serve/sse.h"
#include "serve/tokenize_route.h"
#include "serve/web_page.h"

namespace ridge {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kJson = "application/json";

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Anthropic's routes answer errors in Anthropic's shape, the rest in OpenAI's.
Api api_of_path(const std::string& path) { return path.rfind("/v1/messages", 0) == 0 ? Api::kAnthropic : Api::kOpenai; }

void reply_error(httplib::Response& res, const ApiError& error, Api api = Api::kOpenai) {
  res.status = error.status;
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
  res.set_content(dump(error_body(api, error)), kJson);
}

// httplib's listener keeps a backlog of 5 connections (fixed when the library was built): a burst
// of clients would have their SYNs dropped and retried a second later. Linux lets a listening
// socket's backlog be raised by calling listen() again.
class Listener : public httplib::Server {
 public:
  void raise_backlog() { ::listen(svr_sock_, SOMAXCONN); }
};

}  // namespace

struct HttpServer::Impl {
  Impl(CompletionBackend& b, ServerConfig c) : backend(b), config(std::move(c)) { metrics.set_slo(config.slo); }

  void install_routes();
  bool authorized(const httplib::Request& req) const;
  using Parse = std::function<OpenaiRequest(std::string_view body)>;
  void completion(Api api, const Parse& parse, const httplib::Request& req, httplib::Response& res);
  void count_tokens(const httplib::Request& req, httplib::Response& res);
  // CORS headers for an allowed Origin; true when the request was a preflight, now answered.
  bool cors(const httplib::Request& req, httplib::Response& res) const;
  // A route whose reply is one JSON text from `reply`, errors in OpenAI's shape.
  template <typename Reply>
  void json_route(httplib::Response& res, Reply reply) {
    try {
      res.set_content(reply(), "application/json");
    } catch (const ApiError& e) {
      reply_error(res, e, Api::kOpenai);
    } catch (const Error& e) {
      reply_error(res, ApiError(400, e.what()), Api::kOpenai);
    }
  }
  void check_model(const OpenaiRequest& request) const;
  void stream_response(std::shared_ptr<CompletionJob> job, std::shared_ptr<void> tracked, Clock::time_point deadline,
                       httplib::Response& res);
  json models() const;

  CompletionBackend& backend;
  EmbeddingService* embeddings = nullptr;
  bool embeddings_listed = false;
  ServerConfig config;
  Listener http;
  ServeMetrics metrics;
  InflightRequests inflight;
  ResponseStore responses;  // the Responses API's stored responses (previous_response_id)
  std::atomic<bool> draining{false};
  int port = -1;  // the bound port
  // The peer of the request each httplib worker serves, from routing until its response is written
  // (the logger runs then); a worker whose write failed is overwritten by its next request. The
  // shutdown leaves these connections alone and wakes the idle ones.
  std::mutex busy_mutex;
  std::map<std::thread::id, std::pair<std::string, int>> busy;
  std::once_flag shutdown_once;
  const int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
};

namespace {

// Compared in full whatever the first difference, so the time taken tells nothing about the key.
bool same_secret(const std::string& got, const std::string& expected) {
  unsigned diff = got.size() != expected.size();
  for (size_t i = 0; i < expected.size(); ++i) diff |= unsigned(i < got.size() ? got[i] ^ expected[i] : 1);
  return diff == 0;
}

}  // namespace

// OpenAI's clients send "Authorization: Bearer KEY", Anthropic's "x-api-key: KEY"; either will do.
bool HttpServer::Impl::authorized(const httplib::Request& req) const {
  if (config.api_key.empty()) return true;
  const bool bearer = same_secret(req.get_header_value("Authorization"), "Bearer " + config.api_key);
  const bool x_api_key = same_secret(req.get_header_value("x-api-key"), config.api_key);
  return bearer | x_api_key;
}

json HttpServer::Impl::models() const {
  json model = {{"id", backend.model_id()}, {"object", "model"}, {"created", created}, {"owned_by", "ridge"},
                {"max_model_len", backend.n_ctx()}};
  if (embeddings && !embeddings_listed) model["task"] = "embed";  // the backend is the embedding model itself
  json data = json::array({model});
  if (embeddings && embeddings_listed)
    data.push_back({{"id", embeddings->id()}, {"object", "model"}, {"created", created}, {"owned_by", "ridge"},
                    {"max_model_len", embeddings->model().max_tokens()}, {"task", "embed"},
                    {"dimensions", embeddings->model().dimensions()}});
  return {{"object", "list"}, {"data", std::move(data)}};
}

void HttpServer::Impl::check_model(const OpenaiRequest& request) const {
  if (!request.model.empty() && request.model != backend.model_id())
    throw ApiError(404, fmt::format("The model '{}' does not exist (this server serves '{}').", request.model, backend.model_id()),
                   "model", "model_not_found");
}

// Anthropic's POST /v1/messages/count_tokens: the prompt's tokens, as the request would be run.
void HttpServer::Impl::count_tokens(const httplib::Request& req, httplib::Response& res) {
  try {
    const OpenaiRequest request = parse_anthropic_request(req.body, /*count_only=*/true);
    check_model(request);
    res.set_content(dump(json{{"input_tokens", render_prompt(backend, request).tokens.size()}}), kJson);
  } catch (const ApiError& e) {
    reply_error(res, e, Api::kAnthropic);
  } catch (const Error& e) {
    reply_error(res, ApiError(400, e.what()), Api::kAnthropic);
  } catch (const std::exception& e) {
    reply_error(res, ApiError(500, fmt::format("internal error: {}", e.what()), {}, {}, "server_error"), Api::kAnthropic);
  }
}

// The client's X-Request-Id (printable ASCII, at most 128 bytes), or a new one: echoed on the response.
static std::string request_id_of(const httplib::Request& req) {
  std::string id;
  for (char c : req.get_header_value("X-Request-Id"))
    if (c > 0x20 && c < 0x7f && id.size() < 128) id += c;
  return id.empty() ? random_id("req-") : id;
}

bool HttpServer::Impl::cors(const httplib::Request& req, httplib::Response& res) const {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty() || config.allowed_origins.empty()) return false;
  const bool any = std::find(config.allowed_origins.begin(), config.allowed_origins.end(), "*") != config.allowed_origins.end();
  if (!any && std::find(config.allowed_origins.begin(), config.allowed_origins.end(), origin) == config.allowed_origins.end())
    return false;  // no CORS headers: the browser keeps the page out
  res.set_header("Access-Control-Allow-Origin", any ? "*" : origin);
  if (!any) res.set_header("Vary", "Origin");
  res.set_header("Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
  if (req.method != "OPTIONS") return false;
  const std::string asked = req.get_header_value("Access-Control-Request-Headers");
  res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type, X-Api-Key, X-Request-Id" : asked);
  res.set_header("Access-Control-Max-Age", "600");
  res.status = 204;
  return true;
}

void HttpServer::Impl::completion(Api api, const Parse& parse, const httplib::Request& req, httplib::Response& res) {
  const auto arrival = Clock::now();
  const auto deadline = arrival + config.request_timeout;
  try {
    const OpenaiRequest request = parse(req.body);
    check_model(request);
    auto job = std::make_shared<CompletionJob>(backend, metrics, request, arrival);
    auto tracked = inflight.track(job->stream());
    job->submit();
    if (request.stream) {
      stream_response(std::move(job), std::move(tracked), deadline, res);
    } else {
      // The socket is looked up only for requests still running after the first poll.
      std::optional<ConnectionWatch> watch;
      auto client_gone = [&] {
        if (!watch) watch.emplace(req.remote_addr, req.remote_port, req.local_port);
        return watch->closed();
      };
      res.set_content(dump(job->wait_response(deadline, config.poll_interval, client_gone)), kJson);
    }
  } catch (const ApiError& e) {
    reply_error(res, e, api);
  } catch (const SubmitError& e) {
    reply_error(res, ApiError(400, e.what()), api);
  } catch (const Error& e) {  // a user-facing failure from below (tokenizer, template)
    reply_error(res, ApiError(400, e.what()), api);
  } catch (const std::exception& e) {
    reply_error(res, ApiError(500, fmt::format("internal error: {}", e.what()), {}, {}, "server_error"), api);
  }
}

// SSE through httplib's chunked provider: each call hands over what the job has ready, waiting at
// most poll_interval, so a quiet stream still notices a closed connection (sink.is_writable peeks
// the socket) and cancels its choices at once.
void HttpServer::Impl::stream_response(std::shared_ptr<CompletionJob> job, std::shared_ptr<void> tracked,
                                       Clock::time_point deadline, httplib::Response& res) {
  const auto poll = config.poll_interval;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      kSseContentType,
      [job, tracked, deadline, poll](size_t, httplib::DataSink& sink) {
        try {
          const std::string text = job->next_sse(Clock::now() + poll, deadline);
          if (!text.empty() && !sink.write(text.data(), text.size())) {
            job->cancel();
            return false;
          }
          if (job->done()) {
            sink.done();
            return true;
          }
          if (text.empty() && !sink.is_writable()) {
            job->cancel();
            return false;
          }
          return true;
        } catch (const std::exception&) {
          job->cancel();
          return false;
        }
      },
      [job](bool success) {
        if (!success) job->cancel();  // the connection went away or the server stopped
      });
}

void HttpServer::Impl::install_routes() {
  http.new_task_queue = [n = size_t(std::max(1, config.http_threads))] { return new httplib::ThreadPool(n); };
  http.set_payload_max_length(config.max_body_bytes);

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard lock(busy_mutex);
      busy[std::this_thread::get_id()] = {req.remote_addr, req.remote_port};
    }
    const bool api = req.path.rfind("/v1/", 0) == 0 || req.path == "/tokenize" || req.path == "/detokenize" ||
                     req.path == "/rerank" || req.path == "/score";
    const Api flavour = api_of_path(req.path);
    res.set_header("X-Request-Id", request_id_of(req));
    if (cors(req, res)) return httplib::Server::HandlerResponse::Handled;  // a preflight, answered
    if (api && !authorized(req)) {
      reply_error(res, ApiError(401, "Incorrect or missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
                                {}, "invalid_api_key", error_type_for_status(401)), flavour);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (draining && (api || req.path == "/health")) {
      reply_error(res, ApiError(503, "the server is shutting down", {}, {}, error_type_for_status(503)), flavour);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (api || req.path == "/health") {
      if (const std::string why = backend.unavailable(); !why.empty()) {
        res.set_header("Retry-After", "10");
        reply_error(res, ApiError(503, why, {}, {}, error_type_for_status(503)), flavour);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Statuses httplib sets itself (404 no route, 413 body too large, 400 malformed HTTP) get a JSON body too.
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours already
    std::string message = fmt::format("HTTP {}", res.status);
    if (res.status == 404) message = fmt::format("no route for {} {}", req.method, req.path);
    if (res.status == 413) message = fmt::format("the request body is larger than {} bytes", config.max_body_bytes);
    reply_error(res, ApiError(res.status, message, {}, {}, error_type_for_status(res.status)), api_of_path(req.path));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_logger([this](const httplib::Request&, const httplib::Response&) {
    std::lock_guard lock(busy_mutex);
    busy.erase(std::this_thread::get_id());
  });
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    reply_error(res, ApiError(500, "internal error", {}, {}, "server_error"), api_of_path(req.path));
  });

  http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    completion(Api::kOpenai, [](std::string_view body) { return parse_openai_request(Endpoint::Completions, body); }, req, res);
  });
  http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    completion(Api::kOpenai, [](std::string_view body) { return parse_openai_request(Endpoint::ChatCompletions, body); }, req, res);
  });
  http.Post("/v1/messages", [this](const httplib::Request& req, httplib::Response& res) {
    completion(Api::kAnthropic, [](std::string_view body) { return parse_anthropic_request(body); }, req, res);
  });
  http.Post("/v1/responses", [this](const httplib::Request& req, httplib::Response& res) {
    completion(Api::kResponses, [this](std::string_view body) { return parse_responses_request(body, responses); }, req, res);
  });
  http.Post("/v1/messages/count_tokens", [this](const httplib::Request& req, httplib::Response& res) { count_tokens(req, res); });
  http.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    json_route(res, [&] { return tokenize_reply(backend, req.body); });
  });
  http.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    json_route(res, [&] { return detokenize_reply(backend, req.body); });
  });
  // The embedding model's routes; vLLM also answers /rerank and /score without the /v1.
  const auto embedding_route = [this](auto reply) {
    return [this, reply](const httplib::Request& req, httplib::Response& res) {
      json_route(res, [&]() -> std::string {
        if (!embeddings)
          throw ApiError(400, fmt::format("the model '{}' does not produce embeddings: start ridge serve with an embedding "
                                          "model (-m) or --embedding-model", backend.model_id()),
                         "model", "model_not_supported");
        std::optional<ConnectionWatch> watch;
        return reply(*embeddings, req.body, [&] {
          if (!watch) watch.emplace(req.remote_addr, req.remote_port, req.local_port);
          return watch->closed();
        });
      });
    };
  };
  http.Post("/v1/embeddings", embedding_route(embeddings_reply));
  for (const char* path : {"/v1/rerank", "/rerank"}) http.Post(path, embedding_route(rerank_reply));
  for (const char* path : {"/v1/score", "/score"}) http.Post(path, embedding_route(score_reply));
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) { res.set_content(dump(models()), kJson); });
  http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    const json all = models();
    for (const json& m : all["data"])
      if (m["id"] == req.matches[1].str()) return res.set_content(dump(m), kJson);
    reply_error(res, ApiError(404, fmt::format("The model '{}' does not exist.", req.matches[1].str()), "model", "model_not_found"));
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"status":"ok"})", kJson); });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::string text = metrics.prometheus(backend.stats());
    if (embeddings) text += embedding_metrics(*embeddings);
    res.set_content(with_metrics_prefix(text, config.metrics_prefix),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/metrics/json", [this](const httplib::Request&, httplib::Response& res) {
    json view = metrics.json(backend.stats());
    view["model"] = backend.model_id();
    view["n_ctx"] = backend.n_ctx();
    view["inflight_http"] = inflight.size();
    res.set_content(dump(view), kJson);
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(std::string(web_page_html()), "text/html; charset=utf-8"); });
}

HttpServer::HttpServer(CompletionBackend& backend, ServerConfig config)
    : impl_(std::make_unique<Impl>(backend, std::move(config))) {
  impl_->install_routes();
}

HttpServer::~HttpServer() {
  if (impl_->http.is_running()) impl_->http.stop();
}

void HttpServer::add_post(const std::string& path, PostHandler handler) {
  impl_->http.Post(path, [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    const ConnectionWatch watch(req.remote_addr, req.remote_port, req.local_port);
    auto [status, body] = handler(req.body, [&watch] { return watch.closed(); });
    res.status = status;
    res.set_content(body, kJson);
  });
}

void HttpServer::set_embeddings(EmbeddingService* service, bool listed) {
  impl_->embeddings = service;
  impl_->embeddings_listed = listed;
}

void HttpServer::add_get(const std::string& path, std::function<std::string()> json_body) {
  impl_->http.Get(path, [json_body = std::move(json_body)](const httplib::Request&, httplib::Response& res) {
    res.set_content(json_body(), kJson);
  });
}

int HttpServer::bind() {
  const auto& c = impl_->config;
  int port = c.port;
  if (port == 0) {
    port = impl_->http.bind_to_any_port(c.host);
  } else if (!impl_->http.bind_to_port(c.host, port)) {
    port = -1;
  }
  if (port < 0) fail("cannot listen on {}:{} (address in use, or not an address of this machine?)", c.host, c.port);
  impl_->http.raise_backlog();
  impl_->port = port;
  return port;
}

void HttpServer::run() {
  if (!impl_->draining) impl_->http.listen_after_bind();
}

void HttpServer::shutdown() {
  std::call_once(impl_->shutdown_once, [this] {
    Impl& s = *impl_;
    s.draining = true;
    if (!s.inflight.wait_empty(Clock::now() + s.config.shutdown_grace)) {
      s.inflight.cancel_all();  // their handlers see the Abort events and end their responses
      s.inflight.wait_empty(Clock::now() + std::chrono::seconds(5));
    }
    s.http.stop();
    // Idle keep-alive connections would hold run() up to httplib's keep-alive timeout.
    if (s.port > 0)
      shut_down_idle_connections(s.port, [&s](const std::string& addr, int port) {
        std::lock_guard lock(s.busy_mutex);
        return std::any_of(s.busy.begin(), s.busy.end(), [&](const auto& b) { return b.second == std::pair(addr, port); });
      });
  });
}

}  // namespace ridge
