#pragma once
// What the planner knows about a machine: memory size and bandwidth, dense peak rates per math
// precision, interconnect. Datasheet entries for the GPUs the seeds discuss, entries from a user's
// JSON file, and this machine's CPU as `ridge probe` measured it.
#include <optional>
#include <string>
#include <vector>

#include "plan/comm_model.h"
#include "plan/number_format.h"

namespace ridge::plan {

struct HardwareSpec {
  std::string name;            // "H100 SXM"
  std::string kind = "gpu";    // "gpu" or "cpu"
  std::string source;          // "datasheet", a user file's path, or the probe profile's path
  double memory_bytes = 0;     // HBM (GPU) or RAM (CPU)
  double memory_bw = 0;        // bytes/s
  // Dense peaks in FLOP/s (ops/s for INT8); 0 = no native support (falls back, see peak()).
  double peak_f32 = 0, peak_bf16 = 0, peak_fp8 = 0, peak_int8 = 0, peak_fp4 = 0;
  double interconnect_bw = 0;  // bytes/s per device, one direction (NVLink)
  int64_t domain_size = 1;     // devices in one interconnect domain (8 for HGX, 72 for NVL72)
  std::optional<double> price_per_hour;  // USD per device-hour
  int64_t threads = 0;         // CPU: the thread count the probe numbers are for
  std::string note;            // CPU: ISA and caches, for the report
  // CPU: the messages between ranks as `ridge probe --dist` measured them (the profile's "dist").
  std::optional<CommModel> measured_comm;

  // The rate a GEMM of this class runs at. A class the device lacks runs on the next wider one
  // it has (FP4 -> FP8 -> BF16 -> F32; INT8 -> FP8 -> ...).
  double peak(ComputeClass c) const;
  // Machine balance: FLOPs per byte of memory traffic at which compute and memory take equal time.
  double balance(ComputeClass c) const { return peak(c) / memory_bw; }
};

// The built-in datasheet entries (H100 SXM, H200 SXM, B200, GB300).
const std::vector<HardwareSpec>& datasheet_hardware();

// Entries from a JSON file: {"hardware": [{"name": ..., "memory_gb": 80, "bandwidth_tbs": 3.35,
// "bf16_tflops": 989, "fp8_tflops": 1979, "fp4_tflops": 0, "int8_tops": 1979, "f32_tflops": 67,
// "interconnect_gbs": 900, "domain_size": 8, "price_per_hour": 2.0}]} (or the array alone).
std::vector<HardwareSpec> read_hardware_file(const std::string& path);

// This machine's CPU from the probe's profile ($RIDGE_HOME/machine.json). threads 0 = the largest
// thread count the profile measured. Error "run ridge probe first" when the file is absent. A
// "dist" entry (mpirun -np N ridge probe --dist) becomes measured_comm.
HardwareSpec hardware_from_probe_profile(const std::string& path, int64_t threads = 0);
std::string default_probe_profile_path();

// Find by name, case-insensitive, among `extra` (user entries, searched first) and the datasheet;
// "h100" matches "H100 SXM". Error listing the names when nothing matches.
HardwareSpec find_hardware(const std::string& name, const std::vector<HardwareSpec>& extra = {});

}  // namespace ridge::plan
