#include "loadgen/serve_bench.h"

#include <fmt/format.h>

#include <memory>

#include "bench/progress.h"
#include "loadgen/serve_report.h"
#include "loadgen/sse_client.h"

namespace ridge::loadgen {
namespace {

RunResult run_with_progress(const std::vector<RequestSpec>& requests, const LoadShape& shape, const Endpoint& endpoint,
                            bool progress, const std::string& label) {
  const SendFn send = [&endpoint](const RequestSpec& r) { return send_streaming_request(endpoint, r); };
  if (!progress) return run_load(requests, shape, send);
  bench::ProgressBar bar(label, int64_t(requests.size()));
  int failed = 0;
  return run_load(requests, shape, send, [&](const RequestResult& r) {
    failed += !r.ok;
    bar.advance(1, failed ? fmt::format("{} failed", failed) : std::string());
  });
}

}  // namespace

ServeSummary run_serve_bench(const ServeBenchConfig& c, const std::string& label) {
  const std::vector<RequestSpec> all = build_workload(c.workload, c.warmup + c.num_requests);
  const std::vector<RequestSpec> warmup(all.begin(), all.begin() + c.warmup);
  const std::vector<RequestSpec> measured(all.begin() + c.warmup, all.end());
  if (!warmup.empty()) {
    LoadShape burst;  // no arrival schedule: the warm-up only has to reach the server
    burst.max_concurrency = c.load.max_concurrency;
    run_with_progress(warmup, burst, c.endpoint, c.progress, "warm-up");
  }
  return summarize(run_with_progress(measured, c.load, c.endpoint, c.progress, label), c.slo);
}

nlohmann::json config_json(const ServeBenchConfig& c) {
  const auto& w = c.workload;
  return {{"base_url", c.endpoint.base_url},
          {"endpoint", api_path(c.endpoint.api)},
          {"model", c.endpoint.model},
          {"num_requests", c.num_requests},
          {"warmup", c.warmup},
          {"request_rate", format_load_value(c.load.request_rate)},
          {"arrival", c.load.arrival == Arrival::Poisson ? "poisson" : "constant"},
          {"max_concurrency", c.load.max_concurrency},
          {"dataset", w.dataset},
          {"input_len", w.dataset.empty() ? w.input_len.describe() : "dataset"},
          {"output_len",
           w.dataset.empty() || w.output_len_given ? w.output_len.describe() : "dataset, else " + w.output_len.describe()},
          {"shared_prefix_fraction", w.shared_prefix_fraction},
          {"shared_prefix_len", w.shared_prefix_len},
          {"ignore_eos", c.endpoint.ignore_eos},
          {"seed", w.seed}};
}

}  // namespace ridge::loadgen
