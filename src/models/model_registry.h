#pragma once
// The models one server offers, loaded on demand and unloaded when idle or when room is needed.
//
// Each configured model is a slot: unloaded -> loading -> loaded (-> draining -> unloaded), or
// failed with the load's error. One loader thread loads models one at a time, so concurrent
// requests for a model load it once and a load never races an eviction. Before a load, the
// model's memory (the estimator's figure: weights and KV pool) must fit in the budget beside what
// is loaded, and the count under --models-max: the least recently used idle model is unloaded
// first; when every candidate has requests in flight, the least recently used one drains (its
// requests finish, new ones wait for it to load again). A model never unloads under a request.
//
// A request holds its model through a Lease; dropping the last one starts the keep-alive clock
// (the request's keep_alive, else --idle-unload). Engines are destroyed on the loader thread,
// never on a request's.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "models/model_source.h"
#include "models/served_model.h"

namespace ridge::models {

enum class ModelState { kUnloaded, kLoading, kLoaded, kDraining, kFailed };
const char* state_name(ModelState state);

class ModelError : public Error {
 public:
  enum class Kind { kNotFound, kLoadFailed, kLoadTimeout, kOverBudget, kNotLoaded };
  ModelError(Kind k, const std::string& message) : Error(message), kind(k) {}
  Kind kind;
};

struct ModelStatus {
  std::string name;
  std::vector<std::string> aliases;
  ModelState state = ModelState::kUnloaded;
  std::string error;         // why the last load failed
  int64_t bytes = 0;         // memory while loaded; before, the estimate (0: not known yet)
  int64_t context_length = 0;
  std::string task;          // "generate", "embed"; empty until first loaded
  int64_t requests_running = 0;
  int64_t loads = 0, unloads = 0, evictions = 0, failures = 0;
  double load_seconds = 0;   // all loads together
};

struct RegistryOptions {
  int64_t memory_budget = 0;  // bytes; 0: no budget
  int32_t max_loaded = 0;     // 0: no cap
  std::chrono::milliseconds load_timeout{120'000};
  double idle_unload_seconds = 0;  // 0: models stay until room is needed
};

class ModelRegistry {
 public:
  using Loader = std::function<std::unique_ptr<ServedModel>(const ModelSource&)>;
  // Bytes the model will hold once loaded; throws Error for a source that is no model.
  using Estimator = std::function<int64_t(const ModelSource&)>;

  class Lease;
  ModelRegistry(std::vector<ModelSource> sources, RegistryOptions options, Loader loader, Estimator estimate);
  ~ModelRegistry();  // unloads every model
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // The model `name` (or an alias) names, loaded; waits while it loads, up to the load timeout.
  // Throws ModelError.
  std::shared_ptr<Lease> acquire(const std::string& name);
  // The model when it is loaded now, else nullptr: no load, and the LRU order and keep-alive
  // clocks are left alone (metrics scrapes).
  std::shared_ptr<Lease> peek(const std::string& name);
  // Loads (a failed model is tried again) and waits for it, as acquire.
  void load(const std::string& name);
  // Unloads now (returns 0) or, with requests in flight, drains (returns their count). Throws
  // kNotFound, or kNotLoaded when it is not loaded.
  int64_t unload(const std::string& name);
  // Adds sources whose names are new (a rescanned models directory); returns how many.
  int add_sources(std::vector<ModelSource> sources);

  std::vector<ModelStatus> list() const;
  std::string resolve(const std::string& name_or_alias) const;  // the model's name; "" if none
  const RegistryOptions& options() const { return options_; }

 private:
  struct Slot;
  void release(Slot& slot, std::optional<double> keep_alive_seconds, bool peek);
  void start_load(Slot& slot);  // under mutex_
  void worker();
  void load_one(Slot& slot);
  // Unloads idle models (and drains busy ones) until `slot` fits; false when the worker must stop.
  bool make_room(Slot& slot, std::unique_lock<std::mutex>& lock);
  void retire(Slot& slot, bool eviction);  // under mutex_: the model goes to graveyard_
  void bury(std::unique_lock<std::mutex>& lock);  // destroys graveyard_'s models, the lock released meanwhile
  Slot* find(const std::string& name) const;  // under mutex_
  std::shared_ptr<Lease> wait_loaded(Slot& slot, bool count_lease);

  RegistryOptions options_;
  Loader loader_;
  Estimator estimate_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;   // a slot's state changed (waiters)
  std::condition_variable work_;      // the loader thread has something to do
  std::vector<std::unique_ptr<Slot>> slots_;
  std::map<std::string, Slot*> names_;  // names and aliases
  std::vector<Slot*> load_queue_;
  std::vector<std::unique_ptr<ServedModel>> graveyard_;  // destroyed by the loader thread
  bool stopping_ = false;
  std::thread thread_;
};

// A loaded model held by a request. Its keep-alive (a duration in seconds; 0: unload when the
// request ends; negative: never on idle) applies when the last lease of the model is dropped.
class ModelRegistry::Lease {
 public:
  Lease(ModelRegistry& registry, Slot& slot, ServedModel& model, std::string name, bool peek = false)
      : registry_(registry), slot_(slot), model_(model), name_(std::move(name)), peek_(peek) {}
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ServedModel& model() const { return model_; }
  const std::string& name() const { return name_; }
  void set_keep_alive(double seconds) { keep_alive_ = seconds; }

 private:
  ModelRegistry& registry_;
  Slot& slot_;
  ServedModel& model_;
  std::string name_;
  std::optional<double> keep_alive_;
  bool peek_;
};

}  // namespace ridge::models
