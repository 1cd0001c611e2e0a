// Hardware entries that come from files: a user's JSON list, and the probe's measured CPU profile.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/model_store.h"
#include "plan/hardware.h"

namespace ridge::plan {
namespace {

using nlohmann::json;

json read_json(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot open '{}'", what, path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("{} '{}': not valid JSON ({})", what, path, e.what());
  }
}

double number_or(const json& j, const char* key, double fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) fail("hardware file: '{}' must be a number", key);
  return j[key].get<double>();
}

HardwareSpec hardware_from_json(const json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    fail("hardware file '{}': each entry needs a \"name\"", path);
  HardwareSpec h;
  h.name = j["name"].get<std::string>();
  h.source = path;
  h.kind = j.value("kind", std::string("gpu"));
  h.memory_bytes = number_or(j, "memory_gb", 0) * 1e9;
  h.memory_bw = number_or(j, "bandwidth_tbs", 0) * 1e12;
  h.peak_f32 = number_or(j, "f32_tflops", 0) * 1e12;
  h.peak_bf16 = number_or(j, "bf16_tflops", 0) * 1e12;
  h.peak_fp8 = number_or(j, "fp8_tflops", 0) * 1e12;
  h.peak_int8 = number_or(j, "int8_tops", 0) * 1e12;
  h.peak_fp4 = number_or(j, "fp4_tflops", 0) * 1e12;
  h.interconnect_bw = number_or(j, "interconnect_gbs", 0) * 1e9;
  h.domain_size = int64_t(number_or(j, "domain_size", 1));
  if (j.contains("price_per_hour")) h.price_per_hour = number_or(j, "price_per_hour", 0);
  if (!(h.memory_bw > 0)) fail("hardware file '{}': '{}' needs a positive bandwidth_tbs", path, h.name);
  if (!(h.peak(ComputeClass::BF16) > 0)) fail("hardware file '{}': '{}' needs a bf16_tflops or f32_tflops", path, h.name);
  return h;
}

// The probe keys a measurement by thread count ("1", "2", ...): the entry for `threads`, or the
// largest thread count when threads is 0 or was not measured.
std::pair<int64_t, double> at_threads(const json& table, int64_t threads, const char* key, const std::string& path) {
  if (!table.is_object() || table.empty()) fail("probe profile '{}': '{}' must map thread counts to numbers", path, key);
  int64_t best_threads = 0;
  double best = 0;
  for (const auto& [k, v] : table.items()) {
    if (!v.is_number()) fail("probe profile '{}': '{}' values must be numbers", path, key);
    const int64_t t = std::stoll(k);
    if (t == threads) return {t, v.get<double>()};
    if (t > best_threads) best_threads = t, best = v.get<double>();
  }
  return {best_threads, best};
}

// A fit as probe_dist writes it: {"latency_us": a, "bandwidth_gbs": b}.
CommFit comm_fit(const json& op, const char* name, const std::string& path) {
  if (!op.is_object() || !op.contains("fit") || !op["fit"].is_object())
    fail("probe profile '{}': dist.{} lacks its fit: run mpirun -np N ridge probe --dist again", path, name);
  const json& fit = op["fit"];
  const CommFit f{number_or(fit, "latency_us", -1) * 1e-6, number_or(fit, "bandwidth_gbs", 0) * 1e9};
  if (f.latency_s < 0 || !(f.bandwidth > 0))
    fail("probe profile '{}': dist.{}.fit needs latency_us >= 0 and bandwidth_gbs > 0", path, name);
  return f;
}

std::optional<CommModel> measured_comm(const json& profile, const std::string& path) {
  const auto it = profile.find("dist");
  if (it == profile.end()) return std::nullopt;
  const json& d = *it;
  if (!d.is_object()) fail("probe profile '{}': \"dist\" must be an object", path);
  return measured_comm_model(comm_fit(d.value("all_reduce", json()), "all_reduce", path),
                             comm_fit(d.value("send_recv", json()), "send_recv", path), int64_t(number_or(d, "ranks", 0)),
                             d.value("transport", std::string("unknown transport")), path);
}

}  // namespace

std::vector<HardwareSpec> read_hardware_file(const std::string& path) {
  const json j = read_json(path, "hardware file");
  const json& list = j.is_object() && j.contains("hardware") ? j["hardware"] : j;
  if (!list.is_array()) fail("hardware file '{}': expected {{\"hardware\": [...]}} or an array", path);
  std::vector<HardwareSpec> out;
  for (const auto& entry : list) out.push_back(hardware_from_json(entry, path));
  return out;
}

std::string default_probe_profile_path() { return ridge_home() + "/machine.json"; }

HardwareSpec hardware_from_probe_profile(const std::string& path, int64_t threads) {
  if (!std::filesystem::exists(path)) fail("no CPU profile at {}: run ridge probe first", path);
  const json j = read_json(path, "probe profile");
  for (const char* key : {"read_bandwidth_gbs", "peak_f32_gflops"})
    if (!j.contains(key)) fail("probe profile '{}' lacks '{}': run ridge probe again", path, key);
  HardwareSpec h;
  h.kind = "cpu";
  h.source = path;
  h.name = j.value("cpu", std::string("local CPU"));
  const auto [bw_threads, bw] = at_threads(j["read_bandwidth_gbs"], threads, "read_bandwidth_gbs", path);
  h.threads = bw_threads;
  h.memory_bw = bw * 1e9;
  h.peak_f32 = at_threads(j["peak_f32_gflops"], h.threads, "peak_f32_gflops", path).second * 1e9;
  if (j.contains("peak_int8_gops"))
    h.peak_int8 = at_threads(j["peak_int8_gops"], h.threads, "peak_int8_gops", path).second * 1e9;
  // AMX: bf16 matrices run on the tile unit (prompts' matmuls: kernels/cpu/bf16_gemm.h).
  if (j.contains("peak_amx_bf16_gflops"))
    h.peak_bf16 = at_threads(j["peak_amx_bf16_gflops"], h.threads, "peak_amx_bf16_gflops", path).second * 1e9;
  h.memory_bytes = j.value("memory_gib", 0.0) * 1073741824.0;
  std::string isa;
  if (j.contains("isa") && j["isa"].is_array())
    for (const auto& x : j["isa"])
      if (x.is_string()) isa += (isa.empty() ? "" : " ") + x.get<std::string>();
  h.note = fmt::format("{} threads; L1d {} KiB, L2 {} KiB, L3 {} KiB; {}", h.threads, j.value("l1d_kib", 0),
                       j.value("l2_kib", 0), j.value("l3_kib", 0), isa.empty() ? "isa unknown" : isa);
  if (!(h.memory_bw > 0) || !(h.peak_f32 > 0)) fail("probe profile '{}': bandwidth and f32 peak must be positive", path);
  h.measured_comm = measured_comm(j, path);
  return h;
}

}  // namespace ridge::plan
