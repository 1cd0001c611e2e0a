#include "bench/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>

#include "bench/probe_bandwidth.h"
#include "bench/probe_compute.h"
#include "bench/probe_system.h"
#include "bench/progress.h"

namespace ridge::bench {
namespace {

using nlohmann::json;

constexpr double kComputeSeconds = 0.15;  // per compute run; best of `repetitions`

std::vector<int> default_thread_counts(int cores) {
  std::vector<int> counts;
  for (int n = 1; n < cores; n *= 2) counts.push_back(n);
  counts.push_back(cores);
  return counts;
}

int64_t buffer_bytes(const ProbeOptions& options, const SystemInfo& info) {
  if (options.buffer_mib > 0) return options.buffer_mib << 20;
  const int64_t wanted = std::max<int64_t>(int64_t(1) << 30, 4 * (info.l3_kib << 10));
  const int64_t quarter_of_memory = int64_t(info.memory_gib * double(1ull << 30) / 4);
  return std::max<int64_t>(int64_t(64) << 20, std::min(wanted, quarter_of_memory));
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = -1;
  in >> one_minute;
  return one_minute;
}

}  // namespace

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

json run_probe(const ProbeOptions& options) {
  const SystemInfo info = probe_system();
  std::vector<int> counts = options.thread_counts.empty() ? default_thread_counts(info.cores) : options.thread_counts;
  const int max_threads = *std::max_element(counts.begin(), counts.end());
  const int reps = std::max(1, options.repetitions);
  const int64_t bytes = buffer_bytes(options, info);

  json profile = {{"cpu", info.cpu},        {"cores", info.cores},         {"l1d_kib", info.l1d_kib},
                  {"l2_kib", info.l2_kib},  {"l3_kib", info.l3_kib},       {"isa", info.isa},
                  {"memory_gib", info.memory_gib}, {"probed_at", now_utc()}, {"load_average_1m", load_average()},
                  {"bandwidth_buffer_mib", bytes >> 20}, {"read_kernel", read_kernel_name()},
                  {"f32_kernel", f32_kernels().front()->name}, {"int8_kernel", int8_kernels().front()->name}};

  const size_t n_kernels =
      f32_kernels().size() + int8_kernels().size() + amx_int8_kernels().size() + amx_bf16_kernels().size();
  ProgressBar progress("probe", int64_t(counts.size()) * reps * int64_t(1 + n_kernels) + 1);
  progress.set_note(fmt::format("touching a {} MiB buffer", bytes >> 20));
  {
    const ReadBuffer buffer(size_t(bytes), max_threads);
    progress.advance(1);
    for (int threads : counts) {
      double best = 0;
      for (int r = 0; r < reps; ++r) {
        best = std::max(best, read_bandwidth_gbs(buffer, threads));
        progress.advance(1, fmt::format("read bandwidth, {} thread(s)", threads));
      }
      profile["read_bandwidth_gbs"][std::to_string(threads)] = best;
    }
  }
  // Every supported kernel of each kind, so the INT8 paths can be compared; the peak is the widest's.
  // The matrix engines' peaks (AMX) are kept apart: they are the roof of the kernels that use them.
  const std::pair<const char*, std::vector<const ComputeKernel*>> kinds[] = {
      {"peak_f32_gflops", f32_kernels()},
      {"peak_int8_gops", int8_kernels()},
      {"peak_amx_int8_gops", amx_int8_kernels()},
      {"peak_amx_bf16_gflops", amx_bf16_kernels()}};
  for (const auto& [key, kernels] : kinds) {
    for (const ComputeKernel* kernel : kernels) {
      for (int threads : counts) {
        double best = 0;
        for (int r = 0; r < reps; ++r) {
          best = std::max(best, peak_gops(*kernel, threads, kComputeSeconds));
          progress.advance(1, fmt::format("{}, {} thread(s)", kernel->name, threads));
        }
        profile["kernels_gops"][kernel->name][std::to_string(threads)] = best;
        if (kernel == kernels.front()) profile[key][std::to_string(threads)] = best;
      }
    }
  }
  progress.finish();
  return profile;
}

}  // namespace ridge::bench
