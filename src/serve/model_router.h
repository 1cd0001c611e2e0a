#pragma once
// How the HTTP server finds the model a request names. One model (serve/single_model_router) or
// many loaded on demand (serve/registry_router, over models/model_registry): the routes are the
// same either way and never touch a model they did not acquire.
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/completion_backend.h"

namespace ridge {

class EmbeddingService;
class ServeMetrics;

// A model held for one request: it stays loaded while `hold` lives.
struct ModelHandle {
  std::string name;
  CompletionBackend* completions = nullptr;  // nullptr: the model only embeds
  EmbeddingService* embeddings = nullptr;    // nullptr: the model only generates
  ServeMetrics* metrics = nullptr;           // the model's request metrics
  std::shared_ptr<void> hold;
};

// What a request body says about its model, read before the body is parsed for its API.
struct ModelChoice {
  std::string model;                 // "" when the body names none
  std::optional<double> keep_alive;  // seconds (ollama's keep_alive)
};
// Throws ApiError (400) for a keep_alive that is no duration.
ModelChoice model_choice_of(std::string_view body);

class ModelRouter {
 public:
  virtual ~ModelRouter() = default;
  // The generative model a request names (kEmbed: the embedding model). Throws ApiError: 404 for
  // a name not served, 503 for a model that cannot be loaded now.
  enum class Want { kGenerate, kEmbed };
  virtual ModelHandle acquire(const ModelChoice& choice, Want want) = 0;
  // GET /v1/models's body; `rescan`: look at the models directory again first.
  virtual nlohmann::json list(bool rescan) = 0;
  // /metrics: every model's metrics and the server's.
  virtual std::string prometheus() = 0;
  // /metrics/json (the web page): the default or named model's view.
  virtual nlohmann::json metrics_json(const std::string& model) = 0;
  // Why nothing can be served now (a split model's rank stopped answering), or "".
  virtual std::string unavailable() const { return {}; }
  // POST /models/load and /models/unload: the reply's body. Throws ApiError.
  virtual nlohmann::json load(const std::string& name) = 0;
  virtual nlohmann::json unload(const std::string& name) = 0;
  // POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's bodies). Throws ApiError.
  virtual nlohmann::json load_lora(const nlohmann::json& body);
  virtual nlohmann::json unload_lora(const nlohmann::json& body);
  // Every request in flight, of every model, is cancelled (shutdown) by the HTTP server itself.
};

}  // namespace ridge
