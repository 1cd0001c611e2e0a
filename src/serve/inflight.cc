#include "serve/inflight.h"

#include <vector>

namespace ridge {

std::shared_ptr<void> InflightRequests::track(std::shared_ptr<RequestStream> stream) {
  {
    std::lock_guard lock(mutex_);
    streams_.insert(stream);
  }
  // The handle's deleter unregisters the stream.
  return std::shared_ptr<void>(nullptr, [this, stream](void*) {
    std::lock_guard lock(mutex_);
    streams_.erase(stream);
    if (streams_.empty()) empty_.notify_all();
  });
}

size_t InflightRequests::size() const {
  std::lock_guard lock(mutex_);
  return streams_.size();
}

bool InflightRequests::wait_empty(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mutex_);
  return empty_.wait_until(lock, until, [this] { return streams_.empty(); });
}

void InflightRequests::cancel_all() {
  std::vector<std::shared_ptr<RequestStream>> streams;
  {
    std::lock_guard lock(mutex_);
    streams.assign(streams_.begin(), streams_.end());
  }
  for (auto& s : streams) s->cancel();
}

}  // namespace ridge
