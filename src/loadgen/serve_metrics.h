#pragma once
// The figures of one run: throughput in requests and tokens, latency distributions (TTFT, TPOT,
// ITL, end to end) and goodput under an SLO. Percentiles interpolate linearly between the sorted
// values (numpy's default, as vLLM reports them).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/load_runner.h"
#include "loadgen/slo.h"

namespace ridge::loadgen {

// p in [0, 100]; `sorted` ascending and not empty.
double percentile(const std::vector<double>& sorted, double p);

struct LatencyStats {  // seconds
  size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
LatencyStats latency_stats(std::vector<double> values);  // all zero when empty

struct ServeSummary {
  double duration_s = 0;
  int completed = 0, failed = 0;
  int with_usage = 0;                           // completed requests whose token counts came from the server
  int64_t input_tokens = 0, output_tokens = 0;  // over completed requests
  double request_throughput = 0, input_throughput = 0, output_throughput = 0;  // per second
  LatencyStats ttft, tpot, itl, e2e;  // TPOT over requests with two or more output tokens; ITL pooled
  Slo slo;
  int good_requests = 0;
  std::optional<double> goodput;                    // requests per second meeting the SLO, when one is given
  std::vector<std::pair<std::string, int>> errors;  // distinct failure messages, most frequent first
};

ServeSummary summarize(const RunResult& run, const Slo& slo);

}  // namespace ridge::loadgen
