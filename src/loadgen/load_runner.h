#pragma once
// Runs a list of requests against a server under a load shape: each is sent when it is due (its
// arrival time), by a worker thread of its own, with at most max_concurrency in flight (the rest
// wait their turn, as with vLLM's --max-concurrency). A rate of inf with a cap of C is a closed
// loop of C clients.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "loadgen/arrivals.h"
#include "loadgen/request_result.h"
#include "loadgen/workload.h"

namespace ridge::loadgen {

struct LoadShape {
  double request_rate = std::numeric_limits<double>::infinity();  // requests per second
  Arrival arrival = Arrival::Poisson;
  int max_concurrency = 0;  // 0 = no cap
  uint64_t seed = 0;        // of the arrival times
};

struct RunResult {
  std::vector<RequestResult> requests;  // in the order of the workload
  double duration_s = 0;                // from the start to the last request's end
};

// Sends one request and measures it (send_streaming_request, or a stand-in in tests).
using SendFn = std::function<RequestResult(const RequestSpec&)>;
// Called once per finished request, one call at a time.
using DoneFn = std::function<void(const RequestResult&)>;

RunResult run_load(const std::vector<RequestSpec>& requests, const LoadShape& shape, const SendFn& send,
                   const DoneFn& on_done = nullptr);

}  // namespace ridge::loadgen
