#include "serve/single_model_router.h"

#include <fmt/format.h>

#include "embed/embedding_service.h"
#include "serve/api_error.h"
#include "serve/embeddings_route.h"

namespace ridge {

using nlohmann::json;

SingleModelRouter::SingleModelRouter(CompletionBackend& backend, const loadgen::Slo& slo) : backend_(backend) {
  metrics_.set_slo(slo);
}

ModelHandle SingleModelRouter::acquire(const ModelChoice& choice, Want want) {
  ModelHandle h;
  h.metrics = &metrics_;
  if (want == Want::kEmbed) {
    if (!embeddings_)
      throw ApiError(400, fmt::format("the model '{}' does not produce embeddings: start ridge serve with an embedding "
                                      "model (-m) or --embedding-model", backend_.model_id()),
                     "model", "model_not_supported");
    h.embeddings = embeddings_;  // the route checks the name against the embedding model's
    h.name = embeddings_->id();
    return h;
  }
  if (!choice.model.empty() && choice.model != backend_.model_id())
    throw ApiError(404, fmt::format("The model '{}' does not exist (this server serves '{}').", choice.model, backend_.model_id()),
                   "model", "model_not_found");
  h.completions = &backend_;
  h.name = backend_.model_id();
  return h;
}

json SingleModelRouter::list(bool) {
  json model = {{"id", backend_.model_id()}, {"object", "model"}, {"created", created_}, {"owned_by", "ridge"},
                {"max_model_len", backend_.n_ctx()}};
  if (embeddings_ && !embeddings_listed_) model["task"] = "embed";  // the backend is the embedding model itself
  json data = json::array({model});
  if (embeddings_ && embeddings_listed_)
    data.push_back({{"id", embeddings_->id()}, {"object", "model"}, {"created", created_}, {"owned_by", "ridge"},
                    {"max_model_len", embeddings_->model().max_tokens()}, {"task", "embed"},
                    {"dimensions", embeddings_->model().dimensions()}});
  return {{"object", "list"}, {"data", std::move(data)}};
}

std::string SingleModelRouter::prometheus() {
  std::string text = metrics_.prometheus(backend_.stats());
  if (embeddings_) text += embedding_metrics(*embeddings_);
  return text;
}

json SingleModelRouter::metrics_json(const std::string&) {
  json view = metrics_.json(backend_.stats());
  view["model"] = backend_.model_id();
  view["n_ctx"] = backend_.n_ctx();
  return view;
}

json SingleModelRouter::load(const std::string&) {
  throw ApiError(400, "this server holds one model: start ridge serve with several -m or with --models-dir to load and unload models");
}

json SingleModelRouter::unload(const std::string& name) { return load(name); }

}  // namespace ridge
