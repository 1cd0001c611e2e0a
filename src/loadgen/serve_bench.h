#pragma once
// One benchmark run at one load level: build the requests, send the warm-up ones (not measured),
// then the measured ones under the load shape, with a progress bar on stderr.
#include <nlohmann/json.hpp>
#include <string>

#include "loadgen/load_runner.h"
#include "loadgen/openai_api.h"
#include "loadgen/serve_metrics.h"
#include "loadgen/workload.h"

namespace ridge::loadgen {

struct ServeBenchConfig {
  Endpoint endpoint;
  WorkloadOptions workload;
  LoadShape load;
  int num_requests = 100;
  int warmup = 0;  // sent first, all at once up to the concurrency cap, and left out of the figures
  Slo slo;
  bool progress = true;
};

// The workload is built from the config's seed, so every load level of a sweep sends the same prompts.
ServeSummary run_serve_bench(const ServeBenchConfig& config, const std::string& label);

nlohmann::json config_json(const ServeBenchConfig& config);

}  // namespace ridge::loadgen
