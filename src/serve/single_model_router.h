#pragma once
// The router of a one-model server: every request goes to its backend (a request naming another
// model gets 404), and an embedding model beside it answers the embedding routes.
#include <chrono>

#include "loadgen/slo.h"
#include "serve/lora_adapters.h"
#include "serve/model_router.h"
#include "serve/serve_metrics.h"

namespace ridge {

class SingleModelRouter : public ModelRouter {
 public:
  SingleModelRouter(CompletionBackend& backend, const loadgen::Slo& slo);
  // The embedding model (listed in /v1/models beside the backend's when `listed`; unlisted: the
  // backend stands for the embedding model itself).
  void set_embeddings(EmbeddingService* service, bool listed) {
    embeddings_ = service;
    embeddings_listed_ = listed;
  }

  // The base model's LoRA adapters, served under their own names (before the server starts).
  void set_lora(LoraAdapters* adapters) { lora_ = adapters; }

  ModelHandle acquire(const ModelChoice& choice, Want want) override;
  nlohmann::json load_lora(const nlohmann::json& body) override;
  nlohmann::json unload_lora(const nlohmann::json& body) override;
  nlohmann::json list(bool rescan) override;
  std::string prometheus() override;
  nlohmann::json metrics_json(const std::string& model) override;
  std::string unavailable() const override { return backend_.unavailable(); }
  nlohmann::json load(const std::string& name) override;
  nlohmann::json unload(const std::string& name) override;

 private:
  CompletionBackend& backend_;
  EmbeddingService* embeddings_ = nullptr;
  bool embeddings_listed_ = false;
  LoraAdapters* lora_ = nullptr;
  ServeMetrics metrics_;
  const int64_t created_ =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
};

}  // namespace ridge
