#pragma once
// The LoRA adapters a one-model server offers over its base model: each is a name clients send as
// "model" (vLLM's convention), where its weights come from, its request metrics, and while it is in
// memory its weights (model/lora) and a CompletionBackend that runs requests on the base engine
// with the adapter attached. Adapters are given at start (--lora NAME=PATH) or loaded at run time
// from under --lora-dir (vLLM's /v1/load_lora_adapter). At most --max-loras are in memory: past
// that the least recently used idle one is swapped out (it stays known, and its next request
// reads it from disk again). A request holds its adapter until it ends, so nothing is pulled from
// under it; POST /v1/unload_lora_adapter forgets an adapter.
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
  bool f16 = true;         // A and B kept in f16 (--lora-dtype)
};

class LoraAdapters {
 public:
  struct Entry;
  LoraAdapters(CompletionBackend& base, const ModelSpec& spec, LoraServeConfig config, const loadgen::Slo& slo);
  ~LoraAdapters();

  // At start: an adapter from any path (the operator's command line), read once to check it. Error
  // when it is bad.
  void add(const std::string& name, const std::string& path);
  // Run time (POST /v1/load_lora_adapter): `path` relative to the adapters directory or inside
  // it. Throws ApiError: 404 when run-time loading is off, 400 for a bad name, path or adapter.
  nlohmann::json load(const std::string& name, const std::string& path);
  nlohmann::json unload(const std::string& name);  // ApiError 404 for an unknown name

  // The adapter `name` names, held while the returned pointer lives (read from disk again when it
  // was swapped out); nullptr when no adapter has that name. Throws ApiError (503) when it cannot be read.
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
  struct Slot {
    std::string path;
    std::shared_ptr<Entry> entry;  // null: swapped out
    std::shared_ptr<ServeMetrics> metrics;  // kept across swaps (entries share it)
    std::chrono::steady_clock::time_point last_used;
  };
  std::shared_ptr<Entry> make(const std::string& name, const std::string& path);
  // Under mutex_: `e` into its slot, then idle adapters swapped out, least recently used first,
  // until at most max_loras are in memory (busy ones stay: the cap is exceeded until they idle).
  void insert(Slot& slot, std::shared_ptr<Entry> e);
  void swap_out_idle();
  Slot& new_slot(const std::string& name, const std::string& path);  // under mutex_
  std::string checked_path(const std::string& path) const;

  CompletionBackend& base_;
  const ModelSpec& spec_;
  LoraServeConfig config_;
  loadgen::Slo slo_;
  mutable std::mutex mutex_;
  std::map<std::string, Slot> slots_;
  int64_t loads_ = 0, unloads_ = 0, evictions_ = 0;
};

}  // namespace ridge
