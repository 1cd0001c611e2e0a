#pragma once
// The router of a server with many models (models/model_registry): a request's "model" picks the
// model, loaded on demand; the registry's errors become API errors; /v1/models shows every
// model's state; /metrics labels each model's metrics with model_name.
#include <map>
#include <memory>
#include <mutex>

#include "loadgen/slo.h"
#include "models/model_registry.h"
#include "serve/model_router.h"
#include "serve/serve_metrics.h"

namespace ridge {

class RegistryRouter : public ModelRouter {
 public:
  // `models_dir`: rescanned on GET /v1/models?reload=1 ("" when none).
  RegistryRouter(models::ModelRegistry& registry, const loadgen::Slo& slo, std::string models_dir = {});

  ModelHandle acquire(const ModelChoice& choice, Want want) override;
  nlohmann::json list(bool rescan) override;
  std::string prometheus() override;
  nlohmann::json metrics_json(const std::string& model) override;
  nlohmann::json load(const std::string& name) override;
  nlohmann::json unload(const std::string& name) override;

 private:
  ServeMetrics& metrics_of(const std::string& name);  // made on first use, kept across loads
  std::string checked_name(const std::string& name) const;  // the model's name; throws 404

  models::ModelRegistry& registry_;
  loadgen::Slo slo_;
  std::string models_dir_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<ServeMetrics>> metrics_;
  const int64_t created_ =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
};

}  // namespace ridge
