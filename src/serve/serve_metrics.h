#pragma once
// The server's metrics: request latencies measured here from event timestamps, request and token
// counters, and the engine's own gauges and counters mirrored at scrape time. Names are vLLM's with
// the "ridge:" prefix, so dashboards built for vLLM find them.
#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine_stats.h"
#include "engine/finish_reason.h"
#include "serve/metrics.h"
#include "loadgen/slo.h"

namespace ridge {

class ServeMetrics {
 public:
  ServeMetrics();

  // Per choice, from the timestamps of its events.
  void observe_first_token(double seconds_since_arrival);
  void observe_inter_token(double seconds_since_previous);
  // The time a request waited before its first engine step (the engine measures it: TokenEvent::queue_seconds).
  void observe_queue_time(double seconds);
  // Tokens as they are seen (so throughput is live, not counted when requests end).
  void count_tokens(int64_t prompt_tokens, int64_t generated_tokens);
  struct Finished {
    FinishReason reason = FinishReason::Stop;
    double e2e_seconds = 0;
    double decode_seconds = 0;  // first token to last token
    int64_t prompt_tokens = 0;      // for the length histograms
    int64_t generation_tokens = 0;
    double ttft_seconds = -1;    // -1: no token came
    double max_itl_seconds = 0;  // the longest gap between two tokens
  };
  // Goodput: each finished request counts as meeting or missing each objective, and all of them.
  void set_slo(const loadgen::Slo& slo);
  void observe_finished(const Finished& f);
  // Structured output: the time a request waited for its compiled grammar; ok false when refused.
  void observe_grammar_compile(double seconds, bool ok);

  // The Prometheus text, with the engine's counters and gauges as of `stats`.
  std::string prometheus(const EngineStats& stats);  // every name starts "ridge:"
  // What the web page shows: gauges, totals and recent (last minute) latency percentiles.
  nlohmann::json json(const EngineStats& stats);

 private:
  void mirror(const EngineStats& stats);
  void mirror_slo(const SloStats& slo);  // serve_metrics_slo.cc
  void count_slo(const Finished& f);
  nlohmann::json slo_json(const SloStats& slo) const;

  MetricsRegistry registry_;
  Histogram& ttft_;
  Histogram& itl_;
  Histogram& tpot_;
  Histogram& e2e_;
  Histogram& queue_;
  Histogram& prompt_len_;
  Histogram& generation_len_;
  Counter& finished_stop_;
  Counter& finished_length_;
  Counter& finished_abort_;
  Counter& prompt_tokens_;
  Counter& generation_tokens_;
  Histogram& grammar_compile_;
  Counter& grammar_rejected_;
  RecentSamples recent_ttft_, recent_itl_, recent_e2e_;
  loadgen::Slo slo_;
  struct SloCounters {
    std::string name;
    Counter* met = nullptr;
    Counter* missed = nullptr;
  };
  std::vector<SloCounters> slo_counters_;  // ttft, tpot, itl, e2e (those set), then "all"
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// Prometheus text with every "ridge:" name renamed to "<prefix>:".
std::string with_metrics_prefix(const std::string& text, const std::string& prefix);

}  // namespace ridge
