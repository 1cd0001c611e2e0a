#include "serve/single_model_router.h"

#include <fmt/format.h>

#include "embed/embedding_service.h"
#include "serve/api_error.h"
#include "serve/embeddings_route.h"
#include "serve/metrics_labels.h"

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
  if (!choice.model.empty() && choice.model != backend_.model_id() && lora_)
    if (std::shared_ptr<LoraAdapters::Entry> entry = lora_->acquire(choice.model)) {
      h.completions = &lora_->backend(*entry);
      h.metrics = &lora_->metrics(*entry);
      h.name = choice.model;
      h.hold = std::move(entry);
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
  if (lora_)
    for (json& row : lora_->models(created_, backend_.model_id())) data.push_back(std::move(row));
  return {{"object", "list"}, {"data", std::move(data)}};
}

std::string SingleModelRouter::prometheus() {
  std::string text = metrics_.prometheus(backend_.stats());
  if (lora_) {  // the base's and each adapter's request metrics, told apart by model_name
    std::vector<std::pair<std::string, std::string>> texts = lora_->prometheus();
    if (!texts.empty()) {
      texts.insert(texts.begin(), {backend_.model_id(), text});
      text = merge_model_metrics(texts);
    }
    text += lora_->counters();
  }
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

namespace {

std::string string_field(const json& body, const char* key) {
  if (!body.is_object() || !body.contains(key) || !body[key].is_string())
    throw ApiError(400, fmt::format("the body needs \"{}\" (a string)", key), key);
  return body[key].get<std::string>();
}

}  // namespace

json SingleModelRouter::load_lora(const json& body) {
  if (!lora_ || !lora_->runtime_loading()) return ModelRouter::load_lora(body);
  const std::string name = string_field(body, "lora_name");
  if (name == backend_.model_id()) throw ApiError(400, "'lora_name' is the base model's name", "lora_name");
  return lora_->load(name, string_field(body, "lora_path"));
}

json SingleModelRouter::unload_lora(const json& body) {
  if (!lora_ || !lora_->runtime_loading()) return ModelRouter::unload_lora(body);
  return lora_->unload(string_field(body, "lora_name"));
}

}  // namespace ridge
