#pragma once
#include <string>
// `ridge probe`: measure this machine once (under a minute) and describe it as the machine profile
// (see machine_profile.h for the schema).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace ridge::bench {

struct ProbeOptions {
  std::vector<int> thread_counts;  // empty: 1, 2, 4, ... and the number of CPUs
  int repetitions = 5;             // best of this many runs per figure
  int64_t buffer_mib = 0;          // 0: max(1 GiB, 4 × L3), at most a quarter of memory
};

// Runs every measurement, showing progress on stderr.
nlohmann::json run_probe(const ProbeOptions& options);
// The time now as ISO 8601 UTC ("2026-12-02T06:00:00Z"), as profiles record it.
std::string now_utc();

}  // namespace ridge::bench
