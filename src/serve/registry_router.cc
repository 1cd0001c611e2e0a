#include "serve/registry_router.h"

#include <fmt/format.h>

#include "embed/embedding_service.h"
#include "serve/api_error.h"
#include "serve/embeddings_route.h"
#include "serve/metrics_labels.h"

namespace ridge {

using nlohmann::json;
using models::ModelError;

namespace {

[[noreturn]] void throw_api_error(const ModelError& e) {
  switch (e.kind) {
    case ModelError::Kind::kNotFound: throw ApiError(404, e.what(), "model", "model_not_found");
    case ModelError::Kind::kNotLoaded: throw ApiError(400, e.what(), "model", "model_not_loaded");
    case ModelError::Kind::kOverBudget: throw ApiError(503, e.what(), "model", "model_exceeds_memory_budget");
    case ModelError::Kind::kLoadTimeout: {
      ApiError error(503, e.what(), "model", "model_load_timeout");
      error.retry_after_s = 5;
      throw error;
    }
    case ModelError::Kind::kLoadFailed: break;
  }
  throw ApiError(503, e.what(), "model", "model_load_failed");
}

}  // namespace

RegistryRouter::RegistryRouter(models::ModelRegistry& registry, const loadgen::Slo& slo, std::string models_dir)
    : registry_(registry), slo_(slo), models_dir_(std::move(models_dir)) {}

ServeMetrics& RegistryRouter::metrics_of(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& m = metrics_[name];
  if (!m) {
    m = std::make_unique<ServeMetrics>();
    m->set_slo(slo_);
  }
  return *m;
}

std::string RegistryRouter::checked_name(const std::string& name) const {
  // A name is looked up among the configured models only: a path in a request never reaches a file.
  const std::string resolved = models::is_valid_model_name(name) ? registry_.resolve(name) : std::string();
  if (resolved.empty())
    throw ApiError(404, fmt::format("The model '{}' does not exist (GET /v1/models lists the models here).", name.substr(0, 256)),
                   "model", "model_not_found");
  return resolved;
}

ModelHandle RegistryRouter::acquire(const ModelChoice& choice, Want want) {
  if (choice.model.empty())
    throw ApiError(400, "this server serves several models: name one in 'model' (GET /v1/models lists them)", "model");
  const std::string name = checked_name(choice.model);
  std::shared_ptr<models::ModelRegistry::Lease> lease;
  try {
    lease = registry_.acquire(name);
  } catch (const ModelError& e) {
    throw_api_error(e);
  }
  if (choice.keep_alive) lease->set_keep_alive(*choice.keep_alive);
  models::ServedModel& served = lease->model();
  ModelHandle h;
  h.name = name;
  h.completions = served.completions();
  h.embeddings = served.embeddings();
  if (want == Want::kGenerate && !h.completions)
    throw ApiError(400, fmt::format("the model '{}' is an embedding model: use /v1/embeddings, /v1/rerank or /v1/score", name),
                   "model", "model_not_supported");
  if (want == Want::kEmbed && !h.embeddings)
    throw ApiError(400, fmt::format("the model '{}' does not produce embeddings", name), "model", "model_not_supported");
  h.metrics = &metrics_of(name);
  h.hold = std::move(lease);
  return h;
}

json RegistryRouter::list(bool rescan) {
  if (rescan && !models_dir_.empty()) {
    try {
      registry_.add_sources(models::scan_models_dir(models_dir_));
    } catch (const Error& e) {
      throw ApiError(500, fmt::format("the models directory could not be read again: {}", e.what()), {}, {}, "server_error");
    }
  }
  json data = json::array();
  for (const models::ModelStatus& m : registry_.list()) {
    json status = {{"value", models::state_name(m.state)}};
    if (m.state == models::ModelState::kFailed) {
      status["failed"] = true;
      status["error"] = m.error;
    }
    json row = {{"id", m.name}, {"object", "model"}, {"created", created_}, {"owned_by", "ridge"}, {"aliases", m.aliases},
                {"status", status}, {"bytes", m.bytes}, {"requests_running", m.requests_running}};
    if (m.context_length > 0) row["max_model_len"] = m.context_length;
    if (!m.task.empty()) row["task"] = m.task;
    data.push_back(std::move(row));
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

std::string RegistryRouter::prometheus() {
  std::vector<std::pair<std::string, std::string>> texts;
  std::string registry_text;
  const auto family = [&](const char* name, const char* type, const char* help) {
    registry_text += fmt::format("# HELP ridge:{} {}\n# TYPE ridge:{} {}\n", name, help, name, type);
  };
  const std::vector<models::ModelStatus> all = registry_.list();
  const auto samples = [&](const char* name, auto value) {
    for (const models::ModelStatus& m : all) registry_text += fmt::format("ridge:{}{{model_name=\"{}\"}} {}\n", name, m.name, value(m));
  };
  family("model_loaded", "gauge", "1 while the model is loaded (draining counts), else 0.");
  samples("model_loaded", [](const models::ModelStatus& m) {
    return int(m.state == models::ModelState::kLoaded || m.state == models::ModelState::kDraining);
  });
  family("model_loads_total", "counter", "Loads of the model that succeeded.");
  samples("model_loads_total", [](const models::ModelStatus& m) { return m.loads; });
  family("model_load_failures_total", "counter", "Loads of the model that failed.");
  samples("model_load_failures_total", [](const models::ModelStatus& m) { return m.failures; });
  family("model_unloads_total", "counter", "Unloads of the model (idle, asked for, or to make room).");
  samples("model_unloads_total", [](const models::ModelStatus& m) { return m.unloads; });
  family("model_evictions_total", "counter", "Times the model was unloaded or drained to make room for another.");
  samples("model_evictions_total", [](const models::ModelStatus& m) { return m.evictions; });
  family("model_load_seconds_total", "counter", "Seconds spent loading the model.");
  samples("model_load_seconds_total", [](const models::ModelStatus& m) { return fmt::format("{:.6f}", m.load_seconds); });
  family("model_memory_bytes", "gauge", "The model's memory (weights and KV pool) while loaded, else its estimate.");
  samples("model_memory_bytes", [](const models::ModelStatus& m) { return m.bytes; });
  texts.emplace_back("", registry_text);  // already labelled

  for (const models::ModelStatus& m : all) {
    std::shared_ptr<models::ModelRegistry::Lease> lease = registry_.peek(m.name);
    std::string text;
    {
      std::lock_guard lock(mutex_);
      if (!lease && !metrics_.count(m.name)) continue;  // never served: nothing to say
    }
    if (lease && lease->model().completions()) {
      text = metrics_of(m.name).prometheus(lease->model().completions()->stats());
    } else if (lease && lease->model().embeddings()) {
      text = embedding_metrics(*lease->model().embeddings());
    } else {
      text = metrics_of(m.name).prometheus(EngineStats{});
    }
    texts.emplace_back(m.name, std::move(text));
  }
  return merge_model_metrics(texts);
}

json RegistryRouter::metrics_json(const std::string& model) {
  std::string name;
  if (!model.empty()) {
    name = checked_name(model);
  } else {  // the web page before it has picked: the first loaded generative model
    for (const models::ModelStatus& m : registry_.list())
      if (m.state == models::ModelState::kLoaded && m.task == "generate") {
        name = m.name;
        break;
      }
  }
  json view;
  std::shared_ptr<models::ModelRegistry::Lease> lease = name.empty() ? nullptr : registry_.peek(name);
  if (lease && lease->model().completions()) {
    view = metrics_of(name).json(lease->model().completions()->stats());
    view["n_ctx"] = lease->model().context_length();
  } else {
    view = metrics_of(name.empty() ? std::string("-") : name).json(EngineStats{});
    view["n_ctx"] = 0;
  }
  view["model"] = name;
  json states = json::object();
  for (const models::ModelStatus& m : registry_.list()) states[m.name] = models::state_name(m.state);
  view["models"] = std::move(states);
  return view;
}

json RegistryRouter::load(const std::string& name) {
  const std::string resolved = checked_name(name);
  try {
    registry_.load(resolved);
  } catch (const ModelError& e) {
    throw_api_error(e);
  }
  return {{"success", true}, {"model", resolved}, {"status", "loaded"}};
}

json RegistryRouter::unload(const std::string& name) {
  const std::string resolved = checked_name(name);
  int64_t running = 0;
  try {
    running = registry_.unload(resolved);
  } catch (const ModelError& e) {
    throw_api_error(e);
  }
  if (running == 0) return {{"success", true}, {"model", resolved}, {"status", "unloaded"}};
  return {{"success", true}, {"model", resolved}, {"status", "draining"}, {"requests_running", running}};
}

}  // namespace ridge
