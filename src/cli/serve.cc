// ridge serve: the HTTP server (OpenAI and Anthropic APIs) over the continuous-batching engine, with a chat
// page and live metrics at "/".
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include "chat/reasoning.h"
#include "chat/tool_format.h"
#include "cli/commands.h"
#include "cli/disagg_options.h"
#include "cli/engine_options.h"
#include "cli/serve_models.h"
#include "cli/slo_setup.h"
#include "core/error.h"
#include "core/log.h"
#include "embed/embedding_service.h"
#include "model/model_store.h"
#include "models/model_source.h"
#include "serve/embedding_only_backend.h"
#include "serve/engine_backend.h"
#include "serve/http_server.h"
#include "serve/lora_adapters.h"
#include "backend/device.h"

namespace ridge::cli {
namespace {

struct ServeOptions {
  EngineCliOptions engine;
  DisaggCliOptions disagg;
  SloCliOptions slo;
  ServerConfig server;
  std::string served_model_name;
  std::string tool_call_parser;  // overrides the tool format detected from the chat template
  std::string reasoning_format = "separate";
  int32_t reasoning_budget = -1;
  double request_timeout_s = 600;
  double shutdown_grace_s = 30;
  std::string embedding_model;  // a second model for /v1/embeddings, /v1/rerank, /v1/score
  std::string embedding_dtype = "auto";
  MultiModelCliOptions many;  // -m more than once, --models-dir
  std::vector<std::string> loras;  // --lora NAME=PATH
  LoraServeConfig lora;
  std::string lora_dtype = "f16";
  std::string log_format = "text";  // json: one JSON object a line on stderr, an access line per request
};

// SIGINT/SIGTERM are blocked in every thread (so they must be blocked before any thread starts)
// and taken by one watcher thread with sigwait, which runs the graceful shutdown.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Serves until SIGINT / SIGTERM (then finishes requests in flight within the grace) or until the
// server stops on its own.
void run_until_stopped(HttpServer& server, const sigset_t& signals, double grace_s) {
  std::atomic<bool> signalled{false};
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (signalled.exchange(true)) return;
    log_info("ridge serve: {}, finishing requests in flight (up to {:.0f} s)", strsignal(sig), grace_s);
    server.shutdown();
  });
  server.run();
  if (!signalled.exchange(true)) pthread_kill(watcher.native_handle(), SIGTERM);  // wake it: run() ended on its own
  watcher.join();
}

ServerConfig server_config(const ServeOptions& o) {
  ServerConfig config = o.server;
  if (!o.slo.slo.empty()) config.slo = loadgen::parse_slo(o.slo.slo);
  config.request_timeout = std::chrono::milliseconds(int64_t(o.request_timeout_s * 1000));
  config.shutdown_grace = std::chrono::milliseconds(int64_t(o.shutdown_grace_s * 1000));
  return config;
}

const char* scheme(const ServerConfig& config) { return config.ssl_certfile.empty() ? "http" : "https"; }

std::unique_ptr<EmbeddingService> load_embedding_service(const std::string& path, const std::string& id, const ServeOptions& o) {
  auto model = EmbeddingModel::load(path, o.engine.config.n_threads, o.embedding_dtype);
  model->max_batch_tokens = std::max<int64_t>(o.engine.config.max_batched_tokens, model->max_tokens());
  auto service = std::make_unique<EmbeddingService>(std::move(model), id);
  const EmbeddingModel& m = service->model();
  log_info("embedding model: {} ({}, {} matrices, {} layers, {} dimensions, {} pooling{}, up to {} tokens a text)",
           service->id(), m.shape().arch, m.dtype(), m.shape().n_layer, m.dimensions(), pooling_name(m.pipeline().pooling),
           m.pipeline().normalize ? ", normalised" : "", m.max_tokens());
  return service;
}

// A server whose only model is an embedding model: no engine, no KV cache.
void serve_embeddings_only(const ServeOptions& o, const std::string& path, const sigset_t& signals) {
  const auto service = load_embedding_service(path, o.served_model_name, o);
  EmbeddingOnlyBackend backend(*service);
  const ServerConfig config = server_config(o);
  HttpServer server(backend, config);
  server.set_embeddings(service.get(), /*listed=*/false);
  const int port = server.bind();
  log_info("ridge serve: {} on {}://{}:{}/ (/v1/embeddings, /v1/rerank, /v1/score)", service->id(), scheme(config),
           config.host, port);
  run_until_stopped(server, signals, o.shutdown_grace_s);
  log_info("ridge serve: stopped");
}

void serve(ServeOptions& o) {
  const sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not the end of the process
  set_log_format(log_format_from_name(o.log_format));

  if (o.many.active()) {
    if (!o.embedding_model.empty()) fail("--embedding-model: with several models, give the embedding model as one more -m");
    if (!o.slo.slo.empty()) fail("--slo applies to one model: it cannot be combined with several models yet");
    if (!o.served_model_name.empty()) fail("--served-model-name names one model: with several, use -m NAME=SOURCE");
    const ModelServeSettings settings{o.tool_call_parser, o.reasoning_format, o.reasoning_budget, o.embedding_dtype};
    serve_many_models(o.many, o.engine, settings, server_config(o),
                      [&](HttpServer& server) { run_until_stopped(server, signals, o.shutdown_grace_s); });
    log_info("ridge serve: stopped");
    return;
  }
  if (o.many.models.size() == 1) {  // -m [NAME=]SOURCE
    const std::string& arg = o.many.models[0];
    const models::ModelSource source = models::parse_model_arg(arg);
    o.engine.model = source.source;
    if (arg != source.source && o.served_model_name.empty()) o.served_model_name = source.name;
  }

  if (const std::string path = resolve_model_path(o.engine.model); EmbeddingModel::is_embedding_model(path)) {
    if (!o.embedding_model.empty()) fail("-m is an embedding model already; --embedding-model adds one to a generative model");
    return serve_embeddings_only(o, path, signals);
  }
  std::unique_ptr<EmbeddingService> embeddings;
  if (!o.embedding_model.empty()) {
    const std::string path = resolve_model_path(o.embedding_model);
    if (!EmbeddingModel::is_embedding_model(path)) fail("--embedding-model '{}' is not an embedding model", o.embedding_model);
    embeddings = load_embedding_service(path, "", o);
  }

  const auto m = load_model_for_engine(o.engine);
  if (run_as_worker(o.engine, *m)) return;
  EngineConfig engine_cfg = engine_config(o.engine, *m);
  setup_slo(o.slo, o.engine, *m, engine_cfg);
  const std::unique_ptr<Disaggregation> disagg = setup_disaggregation(o.disagg, engine_cfg);
  Engine engine(m->model, m->tokenizer, engine_cfg);
  print_memory_plan(engine, *m);
  auto tools = chat::select_tool_format(m->chat.source, m->chat.format, o.tool_call_parser);
  std::optional<chat::ReasoningTags> reasoning;
  if (chat::reasoning_format_from_name(o.reasoning_format) == chat::ReasoningFormat::kSeparate)
    reasoning = chat::detect_reasoning_tags(m->chat.source);
  EngineBackend backend(engine, m->chat, o.served_model_name.empty() ? m->name : o.served_model_name, tools, reasoning,
                        o.reasoning_budget);
  log_info("tool calling: {}", tools ? std::string(tools->name()) : "none (the chat template has no tool format; see --tool-call-parser)");
  if (reasoning)
    log_info("reasoning: {} ... {} goes to reasoning_content (--reasoning-format none keeps it in content)", reasoning->open,
             reasoning->close);

  const ServerConfig config = server_config(o);
  HttpServer server(backend, config);
  if (embeddings) server.set_embeddings(embeddings.get());
  std::unique_ptr<LoraAdapters> adapters;
  if (!o.loras.empty() || !o.lora.dir.empty()) {
    if (engine_cfg.parallel) fail("--lora: LoRA adapters are not supported on a model split across ranks yet");
    if (resolve_device(engine_cfg.device) != Device::Cpu) fail("--lora: LoRA adapters run on the CPU backend only so far");
    o.lora.f16 = o.lora_dtype == "f16";
    adapters = std::make_unique<LoraAdapters>(backend, m->model.spec, o.lora, config.slo);
    for (const std::string& arg : o.loras) {
      const size_t eq = arg.find('=');
      const bool named = eq != std::string::npos && eq > 0 && arg.find('/') > eq;
      adapters->add(named ? arg.substr(0, eq) : models::default_model_name(arg), named ? arg.substr(eq + 1) : arg);
    }
    server.set_lora(adapters.get());
  }
  if (disagg) attach_disaggregation(*disagg, engine, m->model, server);
  const int port = server.bind();
  engine.start();
  log_info("ridge serve: {} (context {}) on {}://{}:{}/ (OpenAI and Anthropic APIs under /v1, metrics at /metrics)",
           backend.model_id(), backend.n_ctx(), scheme(config), config.host, port);

  run_until_stopped(server, signals, o.shutdown_grace_s);
  engine.stop();
  log_info("ridge serve: stopped");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "HTTP server: OpenAI completions, chat and Responses, Anthropic Messages, models, metrics, a web page");
  auto o = std::make_shared<ServeOptions>();
  ServerConfig& s = o->server;
  cmd->add_option("--host", s.host, "address to listen on (0.0.0.0: every interface)")->capture_default_str();
  cmd->add_option("--port", s.port, "TCP port (0: any free one)")->capture_default_str();
  cmd->add_option("--api-key", s.api_key, "require 'Authorization: Bearer KEY' or 'x-api-key: KEY' on /v1 routes, /tokenize and /detokenize")->envname("RIDGE_API_KEY");
  cmd->add_option("--tool-call-parser", o->tool_call_parser,
                  "how tools are offered and calls read: qwen2.5, hermes, llama3, llama3.1, mistral (default: from the chat template)");
  cmd->add_option("--reasoning-format", o->reasoning_format,
                  "a thinking model's <think> text: separate (reasoning_content / thinking blocks) or none (left in content)")
      ->check(CLI::IsMember({"none", "separate", "deepseek", "auto"}))
      ->capture_default_str();
  cmd->add_option("--reasoning-budget", o->reasoning_budget,
                  "thinking tokens before the close is forced (-1: no limit; 0: thinking off where the template allows; "
                  "a request's reasoning_budget / thinking.budget_tokens wins)")
      ->check(CLI::Range(-1, std::numeric_limits<int32_t>::max()))
      ->capture_default_str();
  cmd->add_option("--served-model-name", o->served_model_name, "the model name clients send (default: the file name without .gguf)");
  cmd->add_option("--embedding-model", o->embedding_model,
                  "an embedding model served beside -m for /v1/embeddings, /v1/rerank and /v1/score (a sentence-transformers "
                  "directory, a GGUF bert file, or a fetched name such as all-minilm-l6-v2)");
  cmd->add_option("--embedding-dtype", o->embedding_dtype,
                  "an embedding model's matrices: auto (bf16 on AMX CPUs, else f32), f32, bf16, f16, q8_0")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "f16", "q8_0"}))
      ->capture_default_str();
  cmd->add_option("--request-timeout", o->request_timeout_s, "seconds before a request is cancelled")->capture_default_str();
  cmd->add_option("--shutdown-grace", o->shutdown_grace_s, "seconds requests in flight may take to finish on SIGTERM/SIGINT")->capture_default_str();
  cmd->add_option("--allowed-origins", s.allowed_origins,
                  "origins whose web pages may call the API (CORS; '*' for any), e.g. --allowed-origins https://app.example")
      ->delimiter(',');
  cmd->add_option("--ssl-certfile", s.ssl_certfile, "serve HTTPS with this certificate (PEM; the chain, server first)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ssl-keyfile", s.ssl_keyfile, "the certificate's private key (PEM; with --ssl-certfile)")->check(CLI::ExistingFile);
  cmd->add_option("--log-format", o->log_format,
                  "stderr as text, or json: one JSON object a line (time, level, message) and an access line per request")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--http-threads", s.http_threads, "connections served at once (more wait their turn)")->capture_default_str();
  cmd->add_option("--metrics-prefix", s.metrics_prefix,
                  "name prefix of /metrics (vllm: what vLLM dashboards and KV-aware routers read)")
      ->check(CLI::IsMember({"ridge", "vllm"}))
      ->capture_default_str();
  add_engine_options(cmd, o->engine);
  add_multi_model_options(cmd, o->many);
  cmd->add_option("--lora", o->loras,
                  "a LoRA adapter served as model NAME: NAME=PATH (a PEFT directory or a GGUF LoRA file); repeatable. Requests "
                  "of different adapters and the base run in the same batch");
  cmd->add_option("--lora-dir", o->lora.dir,
                  "allow POST /v1/load_lora_adapter and /v1/unload_lora_adapter, reading adapters only under DIR");
  cmd->add_option("--lora-dtype", o->lora_dtype, "LoRA adapters' A and B in memory: f16 (half the bytes a step reads) or f32")
      ->check(CLI::IsMember({"f16", "f32"}))
      ->capture_default_str();
  cmd->add_option("--max-loras", o->lora.max_loras, "LoRA adapters held at once (the least recently used idle one unloads)")
      ->capture_default_str();
  add_disagg_options(cmd, o->disagg);
  add_slo_options(cmd, o->slo);
  cmd->callback([o] { serve(*o); });
}

}  // namespace ridge::cli
