#pragma once
// How a run's figures are shown: a summary and latency table for people, JSON for machines, and
// for a sweep one row per load level (the throughput-latency curve).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loadgen/serve_metrics.h"

namespace ridge::loadgen {

// One load level of a sweep.
struct SweepPoint {
  std::string parameter;  // "rate" or "concurrency"
  double value = 0;       // requests/s (inf allowed) or requests in flight
  ServeSummary summary;
};

std::string format_summary(const ServeSummary& summary, const std::string& title);
nlohmann::json summary_json(const ServeSummary& summary);

std::string format_sweep(const std::vector<SweepPoint>& points);
nlohmann::json sweep_json(const std::vector<SweepPoint>& points);

std::string format_load_value(double value);  // "4", "0.5", "inf"

}  // namespace ridge::loadgen
