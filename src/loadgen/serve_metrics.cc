#include "loadgen/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace ridge::loadgen {

double percentile(const std::vector<double>& sorted, double p) {
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * double(sorted.size() - 1);
  const size_t below = size_t(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (rank - double(below)) * (sorted[above] - sorted[below]);
}

LatencyStats latency_stats(std::vector<double> values) {
  LatencyStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = values.size();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  s.p50 = percentile(values, 50);
  s.p90 = percentile(values, 90);
  s.p99 = percentile(values, 99);
  s.max = values.back();
  return s;
}

ServeSummary summarize(const RunResult& run, const Slo& slo) {
  ServeSummary s;
  s.duration_s = run.duration_s;
  s.slo = slo;
  std::vector<double> ttft, tpot, itl, e2e;
  std::map<std::string, int> errors;
  for (const RequestResult& r : run.requests) {
    if (!r.ok) {
      ++s.failed;
      ++errors[r.error];
      continue;
    }
    ++s.completed;
    s.with_usage += r.usage_reported;
    s.input_tokens += r.input_tokens;
    s.output_tokens += r.output_tokens;
    ttft.push_back(r.ttft_s);
    e2e.push_back(r.e2e_s);
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s());
    itl.insert(itl.end(), r.itl_s.begin(), r.itl_s.end());
    s.good_requests += !slo.empty() && meets_slo(r, slo);
  }
  const double per_second = run.duration_s > 0 ? 1.0 / run.duration_s : 0;
  s.request_throughput = s.completed * per_second;
  s.input_throughput = double(s.input_tokens) * per_second;
  s.output_throughput = double(s.output_tokens) * per_second;
  if (!slo.empty()) s.goodput = s.good_requests * per_second;
  s.ttft = latency_stats(std::move(ttft));
  s.tpot = latency_stats(std::move(tpot));
  s.itl = latency_stats(std::move(itl));
  s.e2e = latency_stats(std::move(e2e));
  s.errors.assign(errors.begin(), errors.end());
  std::stable_sort(s.errors.begin(), s.errors.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

}  // namespace ridge::loadgen
