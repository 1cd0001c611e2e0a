#pragma once
// The LoRA adapters a one-model server offers over its base model: each is a name clients send as
// "model" (vLLM's convention), its weights (model/lora), its request metrics, and a
// CompletionBackend that runs requests on the base engine with the adapter attached. Adapters are
// given at start (--lora NAME=PATH) or loaded at run time from under --lora-dir (vLLM's
// /v1/load_lora_adapter); at most --max-loras are held, the least recently used idle one unloaded
// first. A request holds its adapter until it ends, so unloading never pulls one from under it.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/lora/lora_adapter.h"
#include "serve/completion_backend.h"
#include "serve/serve_metrics.h"

namespace ridge {

struct LoraServeConfig {
  std::string dir;        // run-time loading reads only under it; empty: run-time loading is off
  int32_t max_loras = 16;  // adapters held at once
};

class LoraAdapters {
 public:
  struct Entry;
  LoraAdapters(CompletionBackend& base, const ModelSpec& spec, LoraServeConfig config, const loadgen::Slo& slo);
  ~LoraAdapters();

  // At start: an adapter from any path (the operator's command line). Error when it is bad.
  void add(const std::string& name, const std::string& path);
  // Run time (POST /v1/load_lora_adapter): `path` relative to the adapters directory or inside
  // it. Throws ApiError: 404 when run-time loading is off, 400 for a bad name, path or adapter.
  nlohmann::json load(const std::string& name, const std::string& path);
  nlohmann::json unload(const std::string& name);  // ApiError 404 for an unknown name

  // The adapter `name` names, held while the returned pointer lives; nullptr when none.
  std::shared_ptr<Entry> acquire(const std::string& name);
  CompletionBackend& backend(Entry& e);
  ServeMetrics& metrics(Entry& e);

  bool empty() const;
  bool runtime_loading() const { return !config_.dir.empty(); }
  nlohmann::json models(int64_t created, const std::string& parent) const;  // /v1/models rows
  // Each adapter's request metrics (name, text) and the adapters' own counters.
  std::vector<std::pair<std::string, std::string>> prometheus();
  std::string counters() const;

 private:
  std::shared_ptr<Entry> make(const std::string& name, const std::string& path);
  void insert(std::shared_ptr<Entry> e);  // under mutex_: evicts the LRU idle one past max_loras
  std::string checked_path(const std::string& path) const;

  CompletionBackend& base_;
  const ModelSpec& spec_;
  LoraServeConfig config_;
  loadgen::Slo slo_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  int64_t loads_ = 0, unloads_ = 0, evictions_ = 0;
};

}  // namespace ridge
