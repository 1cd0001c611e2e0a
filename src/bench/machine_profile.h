#pragma once
// The machine profile `ridge probe` writes to $RIDGE_HOME/machine.json, read by the benchmarks
// (fraction of measured bandwidth / peak) and the planner. Schema (keys of per-thread maps are
// thread counts as strings):
//   {"cpu": str, "cores": int, "read_bandwidth_gbs": {"1": x, ...}, "peak_f32_gflops": {...},
//    "peak_int8_gops": {...}, "peak_amx_int8_gops" / "peak_amx_bf16_gflops": {...} (AMX CPUs only), "l1d_kib": n, "l2_kib": n, "l3_kib": n, "isa": [str, ...],
//    "memory_gib": x, "kernels_gops": {"avx512-vnni": {"1": x, ...}, ...}, ...}
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ridge::bench {

std::string machine_profile_path();

// nullopt when the file is absent or not valid JSON (run `ridge probe`).
std::optional<nlohmann::json> load_machine_profile();

void save_machine_profile(const nlohmann::json& profile);

// The value of a per-thread map (e.g. "read_bandwidth_gbs") at `threads`; when that count was not
// measured, the one at the largest measured count below it (else the smallest above it).
// nullopt when the map is absent or empty.
std::optional<double> profile_value_at_threads(const nlohmann::json& profile, const std::string& key, int threads);

}  // namespace ridge::bench
