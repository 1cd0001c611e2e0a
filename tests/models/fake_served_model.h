#pragma once
// A ServedModel for the registry's tests: no engine, just its byte count and a tally of how many
// exist, so the tests see loads and unloads happen.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "models/model_registry.h"

namespace ridge::testing {

struct FakeModels {
  std::atomic<int> alive{0};
  std::atomic<int> constructed{0};
  std::mutex mutex;
  std::map<std::string, int64_t> bytes;      // per model name (default 100)
  std::map<std::string, int> load_count;
  std::chrono::milliseconds load_delay{0};
  std::string broken;                        // this model's load throws

  class Model : public models::ServedModel {
   public:
    Model(FakeModels& owner, int64_t bytes) : owner_(owner), bytes_(bytes) { ++owner_.alive; }
    ~Model() override { --owner_.alive; }
    int64_t memory_bytes() const override { return bytes_; }
    int64_t context_length() const override { return 128; }
    const char* task() const override { return "generate"; }

   private:
    FakeModels& owner_;
    int64_t bytes_;
  };

  int64_t bytes_of(const std::string& name) {
    std::lock_guard lock(mutex);
    auto it = bytes.find(name);
    return it == bytes.end() ? 100 : it->second;
  }
  models::ModelRegistry::Loader loader() {
    return [this](const models::ModelSource& s) -> std::unique_ptr<models::ServedModel> {
      std::this_thread::sleep_for(load_delay);
      if (s.name == broken) throw std::runtime_error("not a GGUF file");
      {
        std::lock_guard lock(mutex);
        ++load_count[s.name];
      }
      ++constructed;
      return std::make_unique<Model>(*this, bytes_of(s.name));
    };
  }
  models::ModelRegistry::Estimator estimator() {
    return [this](const models::ModelSource& s) { return bytes_of(s.name); };
  }
  int loads_of(const std::string& name) {
    std::lock_guard lock(mutex);
    return load_count[name];
  }
};

inline std::vector<models::ModelSource> sources(std::initializer_list<const char*> names) {
  std::vector<models::ModelSource> out;
  for (const char* n : names) out.push_back({n, {}, std::string("/models/") + n + ".gguf"});
  return out;
}

inline models::ModelStatus status_of(const models::ModelRegistry& r, const std::string& name) {
  for (const models::ModelStatus& s : r.list())
    if (s.name == name) return s;
  throw std::runtime_error("no model " + name);
}

// Polls `done` for up to `limit`.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

}  // namespace ridge::testing
