#include "serve/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/err.h>

#include "core/error.h"
#include "core/log.h"
#include "serve/anthropic_request.h"
#include "serve/api_error.h"
#include "serve/completion_job.h"
#include "serve/embeddings_route.h"
#include "serve/connection_watch.h"
#include "serve/inflight.h"
#include "serve/model_router.h"
#include "serve/random_id.h"
#include "serve/response_store.h"
#include "serve/response_writer.h"
#include "serve/responses_request.h"
#include "serve/serve_metrics.h"
#include "serve/single_model_router.h"
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
// socket's backlog be raised by calling listen() again. Listener<httplib::Server> serves HTTP,
// Listener<httplib::SSLServer> HTTPS.
class RaisesBacklog {
 public:
  virtual ~RaisesBacklog() = default;
  virtual void raise_backlog() = 0;
};

template <typename Base>
class Listener : public Base, public RaisesBacklog {
 public:
  using Base::Base;
  void raise_backlog() override { ::listen(this->svr_sock_, SOMAXCONN); }
};

// OpenSSL's reasons for the failure just seen on this thread, e.g. "no start line; PEM lib".
std::string openssl_error() {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    if (!text.empty()) text += "; ";
    text += reason ? std::string(reason) : fmt::format("OpenSSL error {:#x}", e);
  }
  return text.empty() ? "no reason given" : text;
}

// HTTPS when the config names a certificate and key (PEM), else HTTP.
std::unique_ptr<httplib::Server> make_listener(const ServerConfig& c) {
  if (c.ssl_certfile.empty() && c.ssl_keyfile.empty()) return std::make_unique<Listener<httplib::Server>>();
  if (c.ssl_certfile.empty() || c.ssl_keyfile.empty()) fail("HTTPS needs both --ssl-certfile and --ssl-keyfile");
  for (const std::string* path : {&c.ssl_certfile, &c.ssl_keyfile})
    if (::access(path->c_str(), R_OK) != 0) fail("cannot read the TLS file '{}': {}", *path, std::strerror(errno));
  auto server = std::make_unique<Listener<httplib::SSLServer>>(c.ssl_certfile.c_str(), c.ssl_keyfile.c_str());
  if (!server->is_valid())
    fail("cannot use '{}' as the TLS certificate with the key '{}' (PEM files, and the key must be the certificate's): {}",
         c.ssl_certfile, c.ssl_keyfile, openssl_error());
  return server;
}

}  // namespace

struct HttpServer::Impl {
  Impl(CompletionBackend& b, ServerConfig c)
      : config(std::move(c)), single(std::make_unique<SingleModelRouter>(b, config.slo)), router(*single) {}
  Impl(ModelRouter& r, ServerConfig c) : config(std::move(c)), router(r) {}

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
  // The model a request's body names (its API's field `model`), held for the request.
  ModelHandle acquire(std::string_view body, const std::string& model, ModelRouter::Want want);
  void stream_response(std::shared_ptr<CompletionJob> job, std::shared_ptr<void> tracked, Clock::time_point deadline,
                       httplib::Response& res);

  ServerConfig config;
  std::unique_ptr<SingleModelRouter> single;  // a one-model server's router
  ModelRouter& router;
  std::unique_ptr<httplib::Server> owned_listener = make_listener(config);  // HTTP or HTTPS
  httplib::Server& http = *owned_listener;
  InflightRequests inflight;
  ResponseStore responses;  // the Responses API's stored responses (previous_response_id)
  std::atomic<bool> draining{false};
  int port = -1;  // the bound port
  // The peer of the request each httplib worker serves, from routing until its response is written
  // (the logger runs then); a worker whose write failed is overwritten by its next request. The
  // shutdown leaves these connections alone and wakes the idle ones.
  std::mutex busy_mutex;
  std::map<std::thread::id, std::pair<std::string, int>> busy;
  // For the access log (--log-format json), under busy_mutex: when each worker's request was routed,
  // and the model it named.
  struct Routed {
    Clock::time_point start;
    std::string model;
  };
  std::map<std::thread::id, Routed> routed;
  void note_model(const std::string& model);
  void log_access(const httplib::Request& req, const httplib::Response& res, const std::optional<Routed>& routed_as) const;
  std::once_flag shutdown_once;
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

ModelHandle HttpServer::Impl::acquire(std::string_view body, const std::string& model, ModelRouter::Want want) {
  ModelChoice choice = model_choice_of(body);
  choice.model = model;
  note_model(model);  // for the access log
  return router.acquire(choice, want);
}

// Anthropic's POST /v1/messages/count_tokens: the prompt's tokens, as the request would be run.
void HttpServer::Impl::count_tokens(const httplib::Request& req, httplib::Response& res) {
  try {
    const OpenaiRequest request = parse_anthropic_request(req.body, /*count_only=*/true);
    const ModelHandle model = acquire(req.body, request.model, ModelRouter::Want::kGenerate);
    res.set_content(dump(json{{"input_tokens", render_prompt(*model.completions, request).tokens.size()}}), kJson);
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
    ModelHandle model = acquire(req.body, request.model, ModelRouter::Want::kGenerate);
    auto job = std::make_shared<CompletionJob>(*model.completions, *model.metrics, request, arrival);
    job->hold(std::move(model.hold));  // the model stays loaded while the job lives
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

void HttpServer::Impl::note_model(const std::string& model) {
  if (model.empty() || log_format() != LogFormat::kJson) return;
  std::lock_guard lock(busy_mutex);
  routed[std::this_thread::get_id()].model = model;
}

// One JSON line per request once its response is written (a stream's when it ends). A request
// httplib refused before routing (malformed HTTP) has no start time or request id of ours.
void HttpServer::Impl::log_access(const httplib::Request& req, const httplib::Response& res,
                                  const std::optional<Routed>& routed_as) const {
  json fields = {{"event", "http_request"}, {"request_id", res.get_header_value("X-Request-Id")}, {"method", req.method},
                 {"path", req.path}, {"status", res.status}, {"remote_addr", req.remote_addr}, {"remote_port", req.remote_port}};
  if (routed_as) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - routed_as->start).count();
    fields["duration_ms"] = double(us) / 1000.0;
    if (!routed_as->model.empty()) fields["model"] = routed_as->model;
  }
  log_line(LogLevel::kInfo, fmt::format("{} {} {}", req.method, req.path, res.status), fields);
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
      routed[std::this_thread::get_id()] = {Clock::now(), {}};
    }
    const bool api = req.path.rfind("/v1/", 0) == 0 || req.path == "/tokenize" || req.path == "/detokenize" ||
                     req.path == "/rerank" || req.path == "/score" || req.path.rfind("/models/", 0) == 0 ||
                     req.path.rfind("/metrics", 0) == 0;
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
      if (const std::string why = router.unavailable(); !why.empty()) {
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
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    std::optional<Routed> routed_as;
    {
      std::lock_guard lock(busy_mutex);
      busy.erase(std::this_thread::get_id());
      if (auto it = routed.find(std::this_thread::get_id()); it != routed.end()) {
        routed_as = std::move(it->second);
        routed.erase(it);
      }
    }
    if (log_format() == LogFormat::kJson) log_access(req, res, routed_as);
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
    json_route(res, [&] {
      const ModelHandle model = acquire(req.body, model_choice_of(req.body).model, ModelRouter::Want::kGenerate);
      return tokenize_reply(*model.completions, req.body);
    });
  });
  http.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    json_route(res, [&] {
      const ModelHandle model = acquire(req.body, model_choice_of(req.body).model, ModelRouter::Want::kGenerate);
      return detokenize_reply(*model.completions, req.body);
    });
  });
  // Scripts load and unload models by name (llama.cpp's router routes); never a path.
  const auto model_admin = [this](bool load) {
    return [this, load](const httplib::Request& req, httplib::Response& res) {
      json_route(res, [&] {
        const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
        if (!body.is_object() || !body.contains("model") || !body["model"].is_string())
          throw ApiError(400, "the body must be {\"model\": \"<name>\"}", "model");
        const std::string name = body["model"].get<std::string>();
        if (name.empty()) throw ApiError(400, "'model' is empty: name a model (GET /v1/models lists them)", "model");
        return dump(load ? router.load(name) : router.unload(name));
      });
    };
  };
  http.Post("/models/load", model_admin(true));
  // vLLM's run-time LoRA routes (on only with --lora-dir).
  for (const bool load : {true, false})
    http.Post(load ? "/v1/load_lora_adapter" : "/v1/unload_lora_adapter", [this, load](const httplib::Request& req, httplib::Response& res) {
      json_route(res, [&] {
        const json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
        return dump(load ? router.load_lora(body) : router.unload_lora(body));
      });
    });
  http.Post("/models/unload", model_admin(false));
  // The embedding model's routes; vLLM also answers /rerank and /score without the /v1.
  const auto embedding_route = [this](auto reply) {
    return [this, reply](const httplib::Request& req, httplib::Response& res) {
      json_route(res, [&]() -> std::string {
        const ModelHandle model = acquire(req.body, model_choice_of(req.body).model, ModelRouter::Want::kEmbed);
        std::optional<ConnectionWatch> watch;
        return reply(*model.embeddings, req.body, [&] {
          if (!watch) watch.emplace(req.remote_addr, req.remote_port, req.local_port);
          return watch->closed();
        });
      });
    };
  };
  http.Post("/v1/embeddings", embedding_route(embeddings_reply));
  for (const char* path : {"/v1/rerank", "/rerank"}) http.Post(path, embedding_route(rerank_reply));
  for (const char* path : {"/v1/score", "/score"}) http.Post(path, embedding_route(score_reply));
  http.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    json_route(res, [&] { return dump(router.list(req.has_param("reload"))); });
  });
  http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    const json all = router.list(false);
    for (const json& m : all["data"])
      if (m["id"] == req.matches[1].str()) return res.set_content(dump(m), kJson);
    reply_error(res, ApiError(404, fmt::format("The model '{}' does not exist.", req.matches[1].str()), "model", "model_not_found"));
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"status":"ok"})", kJson); });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(with_metrics_prefix(router.prometheus(), config.metrics_prefix),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/metrics/json", [this](const httplib::Request& req, httplib::Response& res) {
    json_route(res, [&] {
      json view = router.metrics_json(req.get_param_value("model"));
      view["inflight_http"] = inflight.size();
      return dump(view);
    });
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(std::string(web_page_html()), "text/html; charset=utf-8"); });
}

HttpServer::HttpServer(CompletionBackend& backend, ServerConfig config)
    : impl_(std::make_unique<Impl>(backend, std::move(config))) {
  impl_->install_routes();
}

HttpServer::HttpServer(ModelRouter& router, ServerConfig config) : impl_(std::make_unique<Impl>(router, std::move(config))) {
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

void HttpServer::set_lora(LoraAdapters* adapters) {
  if (!impl_->single) fail("HttpServer::set_lora: LoRA adapters are served by a one-model server");
  impl_->single->set_lora(adapters);
}

void HttpServer::set_embeddings(EmbeddingService* service, bool listed) {
  if (!impl_->single) fail("HttpServer::set_embeddings: a server of many models gets its embedding models from its router");
  impl_->single->set_embeddings(service, listed);
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
  dynamic_cast<RaisesBacklog&>(impl_->http).raise_backlog();
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
