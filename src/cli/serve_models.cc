#include "cli/serve_models.h"

#include <filesystem>
#include <map>

#include "chat/reasoning.h"
#include "chat/tool_format.h"
#include "core/error.h"
#include "core/log.h"
#include "core/memory_limit.h"
#include "embed/embedding_service.h"
#include "model/gguf/gguf_split.h"
#include "model/model_store.h"
#include "models/model_registry.h"
#include "models/shared_cores.h"
#include "serve/engine_backend.h"
#include "serve/registry_router.h"

namespace ridge::cli {
namespace {

namespace fs = std::filesystem;

// Each model's KV pool when --kv-memory is not given: the engine's own default (enough for every
// sequence at full context, up to a quarter of RAM) would let two models take half the machine.
constexpr int64_t kDefaultKvPerModel = int64_t(1) << 30;

// A generative model: its weights, engine and the server's adapter, stopped when destroyed.
class GenerativeModel : public models::ServedModel {
 public:
  GenerativeModel(const models::ModelSource& source, const std::string& path, const EngineCliOptions& engine_options,
                  const ModelServeSettings& s, std::shared_ptr<StepGate> gate) {
    model_ = load_model_for_engine(path, engine_options.chat_template);
    EngineConfig config = engine_config(engine_options, *model_);
    config.step_gate = std::move(gate);
    engine_ = std::make_unique<Engine>(model_->model, model_->tokenizer, config);
    auto tools = chat::select_tool_format(model_->chat.source, model_->chat.format, s.tool_call_parser);
    std::optional<chat::ReasoningTags> reasoning;
    if (chat::reasoning_format_from_name(s.reasoning_format) == chat::ReasoningFormat::kSeparate)
      reasoning = chat::detect_reasoning_tags(model_->chat.source);
    backend_ = std::make_unique<EngineBackend>(*engine_, model_->chat, source.name, tools, reasoning, s.reasoning_budget);
    const KvMemoryPlan& plan = engine_->memory_plan();
    bytes_ = engine_->weight_bytes() + int64_t(plan.n_blocks) * plan.bytes_per_block;
    engine_->start();
  }
  ~GenerativeModel() override { engine_->stop(); }

  CompletionBackend* completions() override { return backend_.get(); }
  int64_t memory_bytes() const override { return bytes_; }
  int64_t context_length() const override { return backend_->n_ctx(); }
  const char* task() const override { return "generate"; }

 private:
  std::unique_ptr<LoadedModel> model_;  // first: the engine holds references into it
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
  int64_t bytes_ = 0;
};

class EmbeddingServedModel : public models::ServedModel {
 public:
  EmbeddingServedModel(const models::ModelSource& source, const std::string& path, int n_threads, const std::string& dtype,
                       int64_t max_batched_tokens, int64_t bytes, std::shared_ptr<StepGate> gate)
      : bytes_(bytes) {
    auto model = EmbeddingModel::load(path, n_threads, dtype);
    model->max_batch_tokens = std::max<int64_t>(max_batched_tokens, model->max_tokens());
    service_ = std::make_unique<EmbeddingService>(std::move(model), source.name);
    service_->set_step_gate(std::move(gate));
  }
  EmbeddingService* embeddings() override { return service_.get(); }
  int64_t memory_bytes() const override { return bytes_; }
  int64_t context_length() const override { return service_->model().max_tokens(); }
  const char* task() const override { return "embed"; }

 private:
  std::unique_ptr<EmbeddingService> service_;
  int64_t bytes_;
};

// A load's error as clients see it (/v1/models, the 503's message): the file's path is the
// server's business, so it is named "the model file".
[[noreturn]] void rethrow_without_paths(const std::string& path, const std::exception& e) {
  std::string message = e.what();
  const std::string dir = fs::path(path).parent_path().string();
  for (const std::string& p : {path, dir, fs::path(path).filename().string()}) {
    if (p.size() < 2) continue;
    for (size_t at; (at = message.find(p)) != std::string::npos;) message.replace(at, p.size(), "the model file");
  }
  throw Error(message);
}

int64_t bytes_on_disk(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    int64_t total = 0;  // every shard of a split GGUF
    for (const std::string& file : gguf::split_file_paths(path)) {
      const auto size = fs::file_size(file, ec);
      if (!ec) total += int64_t(size);
    }
    return total;
  }
  int64_t total = 0;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += int64_t(it->file_size(e2));
  }
  return total;
}

std::vector<models::ModelSource> configured_sources(const MultiModelCliOptions& many) {
  std::vector<models::ModelSource> sources;
  std::map<std::string, size_t> by_name;
  const auto add = [&](models::ModelSource s) {
    if (by_name.count(s.name)) fail("two models are named '{}': name one of them with -m NAME=SOURCE", s.name);
    by_name[s.name] = sources.size();
    sources.push_back(std::move(s));
  };
  for (const std::string& arg : many.models) add(models::parse_model_arg(arg));
  if (!many.models_dir.empty())
    for (models::ModelSource& s : models::scan_models_dir(many.models_dir))
      if (!by_name.count(s.name)) add(std::move(s));
  for (const std::string& alias : many.aliases) {
    const size_t eq = alias.find('=');
    if (eq == std::string::npos || eq == 0) fail("--alias '{}': expected NAME=ALIAS[,ALIAS...]", alias);
    auto it = by_name.find(alias.substr(0, eq));
    if (it == by_name.end()) fail("--alias '{}': no model is named '{}'", alias, alias.substr(0, eq));
    std::string rest = alias.substr(eq + 1);
    for (size_t start = 0; start <= rest.size();) {
      size_t comma = rest.find(',', start);
      if (comma == std::string::npos) comma = rest.size();
      const std::string a = rest.substr(start, comma - start);
      if (!a.empty()) {
        if (!models::is_valid_model_name(a)) fail("--alias '{}': '{}' is not a usable name", alias, a);
        if (by_name.count(a)) fail("--alias '{}': '{}' already names a model", alias, a);
        sources[it->second].aliases.push_back(a);
      }
      start = comma + 1;
    }
  }
  if (sources.empty()) fail("no models to serve: --models-dir '{}' holds no *.gguf file or model directory", many.models_dir);
  return sources;
}

}  // namespace

void add_multi_model_options(CLI::App* cmd, MultiModelCliOptions& o) {
  if (CLI::Option* single = cmd->get_option_no_throw("-m")) cmd->remove_option(single);
  cmd->add_option("-m,--model", o.models,
                  "[NAME=]SOURCE: a GGUF file, an embedding model directory, or a fetched model's name ('default', "
                  "'qwen2.5-coder-0.5b', ...); give it again to serve several models, loaded on demand");
  cmd->add_option("--models-dir", o.models_dir,
                  "serve every *.gguf file (and embedding model directory) in DIR, named by file name; GET /v1/models?reload=1 "
                  "looks again");
  cmd->add_option("--alias", o.aliases, "more names for a model: NAME=ALIAS[,ALIAS...] (repeatable)");
  cmd->add_option("--models-max", o.models_max, "models loaded at once, at most (0: no cap); the least recently used unloads first")
      ->capture_default_str();
  cmd->add_option("--models-memory", o.models_memory,
                  "memory for loaded models' weights and KV pools together (default: 70% of the machine's or cgroup's)");
  cmd->add_option("--model-load-timeout", o.load_timeout_s, "seconds a request waits for its model to load")->capture_default_str();
  cmd->add_option("--idle-unload", o.idle_unload_s, "unload a model idle this many seconds (0: only to make room)")
      ->capture_default_str();
  cmd->add_flag("--models-preload", o.preload, "load every model at start (else on its first request)");
}

void serve_many_models(const MultiModelCliOptions& many, const EngineCliOptions& engine_in, const ModelServeSettings& settings,
                       const ServerConfig& config, const std::function<void(HttpServer&)>& run) {
  EngineCliOptions engine = engine_in;
  if (!engine.draft_model.empty()) fail("--draft-model applies to one model: it cannot be combined with several models yet");
  if (!engine.kv_offload_dir.empty() || !engine.kv_offload_ram.empty())
    fail("--kv-offload-* applies to one model: it cannot be combined with several models yet");
  if (!engine.kv_events_endpoint.empty()) fail("--kv-events-endpoint applies to one model: it cannot be combined with several models yet");
  if (engine.kv_memory.empty()) engine.kv_memory = std::to_string(kDefaultKvPerModel >> 20) + "MiB";
  const int64_t kv_bytes = parse_bytes(engine.kv_memory);

  models::RegistryOptions options;
  options.max_loaded = many.models_max;
  options.memory_budget = many.models_memory.empty() ? memory_limit().bytes / 10 * 7 : parse_bytes(many.models_memory);
  options.load_timeout = std::chrono::milliseconds(int64_t(many.load_timeout_s * 1000));
  options.idle_unload_seconds = many.idle_unload_s;

  auto cores = std::make_shared<models::SharedCores>();
  const int n_threads = engine.config.n_threads;
  const auto estimate = [kv_bytes](const models::ModelSource& s) -> int64_t {
    std::string path = s.source;
    try {
      path = resolve_model_path(s.source);
      if (EmbeddingModel::is_embedding_model(path)) return bytes_on_disk(path);
      return bytes_on_disk(path) + kv_bytes;
    } catch (const std::exception& e) {
      rethrow_without_paths(path, e);
    }
  };
  const auto loader = [&, cores, estimate](const models::ModelSource& s) -> std::unique_ptr<models::ServedModel> {
    std::string path = s.source;
    try {
      path = resolve_model_path(s.source);
      if (EmbeddingModel::is_embedding_model(path))
        return std::make_unique<EmbeddingServedModel>(s, path, n_threads, settings.embedding_dtype,
                                                      engine.config.max_batched_tokens, estimate(s), cores->join(s.name));
      return std::make_unique<GenerativeModel>(s, path, engine, settings, cores->join(s.name));
    } catch (const std::exception& e) {
      log_warning("models: {} ({}): {}", s.name, path, e.what());  // the full story, paths included, for the operator
      rethrow_without_paths(path, e);
    }
  };
  models::ModelRegistry registry(configured_sources(many), options, loader, estimate);
  const std::vector<models::ModelStatus> listed = registry.list();
  log_info("models: {} configured, {} MiB budget{}{}", listed.size(), options.memory_budget >> 20,
           options.max_loaded > 0 ? fmt::format(", at most {} loaded", options.max_loaded) : std::string(),
           many.preload ? "" : ", each loaded on its first request");
  for (const models::ModelStatus& m : listed) log_info("  model {}", m.name);
  if (many.preload)
    for (const models::ModelStatus& m : listed) {
      try {
        registry.load(m.name);
      } catch (const models::ModelError& e) {
        log_warning("models: {}", e.what());
      }
    }

  RegistryRouter router(registry, config.slo, many.models_dir);
  HttpServer server(router, config);
  const int port = server.bind();
  log_info("ridge serve: {} models on {}://{}:{}/ (OpenAI and Anthropic APIs under /v1, GET /v1/models, POST /models/load "
           "and /models/unload, metrics at /metrics)",
           listed.size(), config.ssl_certfile.empty() ? "http" : "https", config.host, port);
  run(server);
}

}  // namespace ridge::cli
