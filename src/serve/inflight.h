#pragma once
// The completion requests being served, so a shutdown can wait for them to finish and cancel
// the ones that outlive the grace period.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>

#include "serve/request_stream.h"

namespace ridge {

class InflightRequests {
 public:
  // Registered while the returned handle lives (a handler keeps it until its response is written).
  std::shared_ptr<void> track(std::shared_ptr<RequestStream> stream);

  size_t size() const;
  // True when none are left by `until`.
  bool wait_empty(std::chrono::steady_clock::time_point until);
  void cancel_all();

 private:
  mutable std::mutex mutex_;
  std::condition_variable empty_;
  std::set<std::shared_ptr<RequestStream>> streams_;
};

}  // namespace ridge
