#include "models/model_registry.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/log.h"

namespace ridge::models {

using Clock = std::chrono::steady_clock;

const char* state_name(ModelState state) {
  switch (state) {
    case ModelState::kUnloaded: return "unloaded";
    case ModelState::kLoading: return "loading";
    case ModelState::kLoaded: return "loaded";
    case ModelState::kDraining: return "draining";
    case ModelState::kFailed: return "failed";
  }
  return "unknown";
}

struct ModelRegistry::Slot {
  ModelSource source;
  ModelState state = ModelState::kUnloaded;
  std::string error;
  ModelError::Kind error_kind = ModelError::Kind::kLoadFailed;
  std::unique_ptr<ServedModel> model;
  int64_t leases = 0;
  int64_t bytes = 0;  // while loaded: the model's; otherwise the last estimate
  int64_t context_length = 0;
  std::string task;
  Clock::time_point last_used{};
  std::optional<Clock::time_point> unload_at;   // idle unload (keep_alive / --idle-unload)
  std::optional<double> keep_alive;              // the latest request's, applied when idle
  int64_t loads = 0, unloads = 0, evictions = 0, failures = 0;
  double load_seconds = 0;
};

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / double(1 << 20)); }

}  // namespace

ModelRegistry::ModelRegistry(std::vector<ModelSource> sources, RegistryOptions options, Loader loader, Estimator estimate)
    : options_(options), loader_(std::move(loader)), estimate_(std::move(estimate)) {
  add_sources(std::move(sources));
  thread_ = std::thread([this] { worker(); });
}

ModelRegistry::~ModelRegistry() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  changed_.notify_all();
  thread_.join();
  // Whatever is still loaded goes in slot order; the engines stop their own requests.
  for (auto& slot : slots_) slot->model.reset();
  graveyard_.clear();
}

int ModelRegistry::add_sources(std::vector<ModelSource> sources) {
  std::lock_guard lock(mutex_);
  int added = 0;
  for (ModelSource& s : sources) {
    if (names_.count(s.name)) continue;
    auto slot = std::make_unique<Slot>();
    slot->source = std::move(s);
    names_[slot->source.name] = slot.get();
    for (const std::string& alias : slot->source.aliases)
      if (!names_.count(alias)) names_[alias] = slot.get();
    slots_.push_back(std::move(slot));
    ++added;
  }
  return added;
}

ModelRegistry::Slot* ModelRegistry::find(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

std::string ModelRegistry::resolve(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const Slot* slot = find(name);
  return slot ? slot->source.name : std::string();
}

void ModelRegistry::start_load(Slot& slot) {
  slot.state = ModelState::kLoading;
  slot.error.clear();
  load_queue_.push_back(&slot);
  work_.notify_all();
}

std::shared_ptr<ModelRegistry::Lease> ModelRegistry::acquire(const std::string& name) {
  std::unique_lock lock(mutex_);
  Slot* slot = find(name);
  if (!slot) throw ModelError(ModelError::Kind::kNotFound, fmt::format("The model '{}' does not exist.", name));
  lock.unlock();
  return wait_loaded(*slot, true);
}

void ModelRegistry::load(const std::string& name) {
  std::unique_lock lock(mutex_);
  Slot* slot = find(name);
  if (!slot) throw ModelError(ModelError::Kind::kNotFound, fmt::format("The model '{}' does not exist.", name));
  if (slot->state == ModelState::kFailed) slot->state = ModelState::kUnloaded;  // asked again: try again
  lock.unlock();
  wait_loaded(*slot, false);
}

std::shared_ptr<ModelRegistry::Lease> ModelRegistry::wait_loaded(Slot& slot, bool count_lease) {
  const auto deadline = Clock::now() + options_.load_timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) throw ModelError(ModelError::Kind::kLoadFailed, "the server is shutting down");
    switch (slot.state) {
      case ModelState::kLoaded:
        slot.last_used = Clock::now();
        if (!count_lease) return nullptr;
        ++slot.leases;
        slot.unload_at.reset();
        return std::make_shared<Lease>(*this, slot, *slot.model, slot.source.name);
      case ModelState::kFailed:
        throw ModelError(slot.error_kind, slot.error);
      case ModelState::kUnloaded:
        start_load(slot);
        break;
      case ModelState::kLoading:
      case ModelState::kDraining:
        break;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        slot.state != ModelState::kLoaded && slot.state != ModelState::kFailed)
      throw ModelError(ModelError::Kind::kLoadTimeout,
                       fmt::format("The model '{}' did not finish loading within {:.0f} s (--model-load-timeout); it is {}.",
                                   slot.source.name, options_.load_timeout.count() / 1000.0, state_name(slot.state)));
  }
}

int64_t ModelRegistry::unload(const std::string& name) {
  std::unique_lock lock(mutex_);
  Slot* slot = find(name);
  if (!slot) throw ModelError(ModelError::Kind::kNotFound, fmt::format("The model '{}' does not exist.", name));
  if (slot->state == ModelState::kDraining) return slot->leases;
  if (slot->state != ModelState::kLoaded)
    throw ModelError(ModelError::Kind::kNotLoaded, fmt::format("The model '{}' is not loaded (it is {}).", name, state_name(slot->state)));
  if (slot->leases == 0) {
    retire(*slot, false);
    return 0;
  }
  slot->state = ModelState::kDraining;
  changed_.notify_all();
  return slot->leases;
}

void ModelRegistry::retire(Slot& slot, bool eviction) {
  graveyard_.push_back(std::move(slot.model));
  slot.state = ModelState::kUnloaded;
  slot.unload_at.reset();
  ++slot.unloads;
  if (eviction) ++slot.evictions;
  changed_.notify_all();
  work_.notify_all();
}

std::shared_ptr<ModelRegistry::Lease> ModelRegistry::peek(const std::string& name) {
  std::lock_guard lock(mutex_);
  Slot* slot = find(name);
  if (!slot || slot->state != ModelState::kLoaded || !slot->model) return nullptr;
  ++slot->leases;
  return std::make_shared<Lease>(*this, *slot, *slot->model, slot->source.name, /*peek=*/true);
}

void ModelRegistry::release(Slot& slot, std::optional<double> keep_alive, bool peek) {
  std::lock_guard lock(mutex_);
  --slot.leases;
  if (peek) {
    if (slot.leases == 0 && slot.state == ModelState::kDraining) retire(slot, false);
    return;
  }
  slot.last_used = Clock::now();
  if (keep_alive) slot.keep_alive = keep_alive;
  if (slot.leases > 0) return;
  if (slot.state == ModelState::kDraining) {
    retire(slot, false);
    return;
  }
  const double seconds = slot.keep_alive ? *slot.keep_alive : options_.idle_unload_seconds > 0 ? options_.idle_unload_seconds : -1;
  if (seconds >= 0) {
    slot.unload_at = slot.last_used + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    work_.notify_all();
  }
}

ModelRegistry::Lease::~Lease() { registry_.release(slot_, keep_alive_, peek_); }

std::vector<ModelStatus> ModelRegistry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<ModelStatus> out;
  for (const auto& s : slots_) {
    ModelStatus m;
    m.name = s->source.name;
    m.aliases = s->source.aliases;
    m.state = s->state;
    m.error = s->error;
    m.bytes = s->bytes;
    m.context_length = s->context_length;
    m.task = s->task;
    m.requests_running = s->leases;
    m.loads = s->loads;
    m.unloads = s->unloads;
    m.evictions = s->evictions;
    m.failures = s->failures;
    m.load_seconds = s->load_seconds;
    out.push_back(std::move(m));
  }
  return out;
}

bool ModelRegistry::make_room(Slot& slot, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (stopping_) return false;
    // Draining models count as gone when deciding what else must go (one drain is enough room),
    // and as present until they have unloaded.
    int64_t used = 0, used_after = 0;
    int32_t count = 0, count_after = 0;
    bool draining = false;
    for (const auto& s : slots_) {
      if (s.get() == &slot) continue;
      if (s->state == ModelState::kLoaded || s->state == ModelState::kDraining) {
        used += s->bytes;
        ++count;
        draining |= s->state == ModelState::kDraining;
        if (s->state == ModelState::kLoaded) used_after += s->bytes, ++count_after;
      }
    }
    const auto fits = [&](int64_t bytes, int32_t n) {
      return (options_.memory_budget <= 0 || bytes + slot.bytes <= options_.memory_budget) &&
             (options_.max_loaded <= 0 || n < options_.max_loaded);
    };
    if (fits(used, count)) return true;
    if (draining && fits(used_after, count_after)) {  // room once the drain ends: wait for it
      work_.wait_for(lock, std::chrono::milliseconds(50));
      bury(lock);
      continue;
    }
    // Idle models first, least recently used first; else drain the least recently used busy one.
    Slot* idle = nullptr;
    Slot* busy = nullptr;
    for (const auto& s : slots_) {
      if (s.get() == &slot || s->state != ModelState::kLoaded) continue;
      Slot*& pick = s->leases == 0 ? idle : busy;
      if (!pick || s->last_used < pick->last_used) pick = s.get();
    }
    if (idle) {
      log_info("models: unloading {} (least recently used) to make room for {}", idle->source.name,
                   slot.source.name);
      retire(*idle, true);
      continue;
    }
    if (busy && !draining) {
      log_info("models: draining {} ({} requests running) to make room for {}", busy->source.name, busy->leases, slot.source.name);
      busy->state = ModelState::kDraining;
      ++busy->evictions;
      changed_.notify_all();
    }
    // Wait for a drain to end (its last request releases it), then look again.
    work_.wait_for(lock, std::chrono::milliseconds(50));
    bury(lock);
  }
}

void ModelRegistry::bury(std::unique_lock<std::mutex>& lock) {
  // Unloaded models free their memory (their engines stop) outside the lock.
  if (graveyard_.empty()) return;
  auto dead = std::move(graveyard_);
  graveyard_.clear();
  lock.unlock();
  dead.clear();
  lock.lock();
}

void ModelRegistry::load_one(Slot& slot) {
  const ModelSource source = slot.source;
  std::unique_lock lock(mutex_, std::defer_lock);
  const auto fail_with = [&](ModelError::Kind kind, const std::string& message) {
    lock.lock();
    slot.state = ModelState::kFailed;
    slot.error_kind = kind;
    slot.error = message;
    ++slot.failures;
    log_warning("models: {} failed to load: {}", source.name, message);
    changed_.notify_all();
    lock.unlock();
  };
  int64_t bytes = 0;
  try {
    bytes = estimate_(source);
  } catch (const std::exception& e) {
    return fail_with(ModelError::Kind::kLoadFailed, fmt::format("The model '{}' failed to load: {}", source.name, e.what()));
  }
  if (options_.memory_budget > 0 && bytes > options_.memory_budget)
    return fail_with(ModelError::Kind::kOverBudget,
                     fmt::format("The model '{}' needs {} ({} bytes: weights and KV pool), more than the whole models memory "
                                 "budget of {} ({} bytes, --models-memory).",
                                 source.name, mib(bytes), bytes, mib(options_.memory_budget), options_.memory_budget));
  lock.lock();
  slot.bytes = bytes;
  if (!make_room(slot, lock)) return;
  lock.unlock();
  const auto start = Clock::now();
  std::unique_ptr<ServedModel> model;
  try {
    model = loader_(source);
  } catch (const std::exception& e) {
    return fail_with(ModelError::Kind::kLoadFailed, fmt::format("The model '{}' failed to load: {}", source.name, e.what()));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  lock.lock();
  slot.bytes = model->memory_bytes();
  slot.context_length = model->context_length();
  slot.task = model->task();
  slot.model = std::move(model);
  slot.state = ModelState::kLoaded;
  slot.last_used = Clock::now();
  slot.unload_at.reset();
  ++slot.loads;
  slot.load_seconds += seconds;
  log_info("models: {} loaded in {:.2f} s ({})", source.name, seconds, mib(slot.bytes));
  changed_.notify_all();
}

void ModelRegistry::worker() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!graveyard_.empty()) {  // engines stop here, outside the lock
      bury(lock);
      continue;
    }
    // Idle models whose keep-alive ran out.
    const auto now = Clock::now();
    std::optional<Clock::time_point> next;
    for (auto& s : slots_) {
      if (s->state != ModelState::kLoaded || s->leases > 0 || !s->unload_at) continue;
      if (*s->unload_at <= now) {
        log_info("models: unloading {} (idle)", s->source.name);
        retire(*s, false);
      } else if (!next || *s->unload_at < *next) {
        next = s->unload_at;
      }
    }
    if (!graveyard_.empty()) continue;
    if (!load_queue_.empty()) {
      Slot* slot = load_queue_.front();
      load_queue_.erase(load_queue_.begin());
      if (slot->state != ModelState::kLoading) continue;
      lock.unlock();
      load_one(*slot);
      lock.lock();
      continue;
    }
    if (next)
      work_.wait_until(lock, *next);
    else
      work_.wait(lock);
  }
}

}  // namespace ridge::models
