// ridge probe: measure this machine (read bandwidth, peak FP32 and INT8 throughput for 1..N
// threads; caches, ISA, memory), print a table and save the machine profile that `ridge bench`
// and the planner read ($RIDGE_HOME/machine.json). Under mpirun, --dist measures the messages
// between the job's ranks instead and saves them as the profile's "dist" entry.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backend/cuda_tools.h"
#include "bench/machine_profile.h"
#include "bench/probe.h"
#include "bench/probe_dist.h"
#include "cli/commands.h"
#include "core/error.h"
#include "dist/world.h"

namespace ridge::cli {
namespace {

using nlohmann::json;

struct ProbeArgs {
  bench::ProbeOptions options;
  bool json = false;
  bool save = true;
  bool dist = false;
  std::string device = "cpu";
};

std::string size_text(int64_t bytes) {
  return bytes >= (int64_t(1) << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} KiB", bytes >> 10);
}

void print_dist_table(const json& d) {
  std::string hosts;
  for (const auto& h : d["hosts"]) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
  std::printf("dist    %d ranks over %s (%s; %s), median of %d samples\n\n", d["ranks"].get<int>(),
              d["transport"].get<std::string>().c_str(), d["backend"].get<std::string>().c_str(), hosts.c_str(),
              d["samples"].get<int>());
  std::printf("%8s %15s %12s %12s %15s %10s\n", "size", "all-reduce µs", "algbw GB/s", "busbw GB/s", "send/recv µs", "GB/s");
  const json& ar = d["all_reduce"]["sizes"];
  const json& sr = d["send_recv"]["sizes"];
  for (size_t i = 0; i < ar.size(); ++i) {
    std::printf("%8s %14.1f %12.2f %12.2f %14.1f %10.2f\n", size_text(ar[i]["bytes"].get<int64_t>()).c_str(),
                ar[i]["us"].get<double>(), ar[i]["algbw_gbs"].get<double>(), ar[i]["busbw_gbs"].get<double>(),
                sr[i]["us"].get<double>(), sr[i]["gbs"].get<double>());
  }
  auto fit = [](const json& f) {
    return fmt::format("{:.1f} µs + bytes / {:.2f} GB/s", f["latency_us"].get<double>(), f["bandwidth_gbs"].get<double>());
  };
  std::printf("\nfit     all-reduce %s; send/recv %s (one way)\n", fit(d["all_reduce"]["fit"]).c_str(),
              fit(d["send_recv"]["fit"]).c_str());
}

// Every rank measures; rank 0 prints and adds the result to the machine profile.
void run_dist(const ProbeArgs& args) {
  dist::Communicator& comm = dist::world();
  if (comm.size() < 2)
    fail("--dist measures the messages between MPI ranks; start it as: mpirun -np 2 ridge probe --dist (more ranks, or "
         "--host a,b for two hosts, work too)");
  bench::DistProbeOptions options;
  options.samples = args.options.repetitions;
  const json d = bench::run_dist_probe(comm, options);
  if (comm.rank() != 0) return;
  if (args.json) std::printf("%s\n", d.dump(2).c_str());
  else print_dist_table(d);
  if (!args.save) return;
  json profile = bench::load_machine_profile().value_or(json::object());
  profile["dist"] = d;
  bench::save_machine_profile(profile);
  std::fprintf(stderr, "saved the \"dist\" entry of %s\n", bench::machine_profile_path().c_str());
}

void print_table(const json& p) {
  std::string isa;
  for (const auto& f : p["isa"]) isa += (isa.empty() ? "" : " ") + f.get<std::string>();
  std::printf("cpu     %s (%d CPUs), %.1f GiB memory\n", p["cpu"].get<std::string>().c_str(), p["cores"].get<int>(),
              p["memory_gib"].get<double>());
  std::printf("caches  L1d %lld KiB, L2 %lld KiB, L3 %lld KiB (per instance)\n", p["l1d_kib"].get<long long>(),
              p["l2_kib"].get<long long>(), p["l3_kib"].get<long long>());
  std::printf("isa     %s\n", isa.c_str());
  std::printf("kernels read %s, f32 %s, int8 %s; load average %.2f when measured\n\n",
              p["read_kernel"].get<std::string>().c_str(), p["f32_kernel"].get<std::string>().c_str(),
              p["int8_kernel"].get<std::string>().c_str(), p["load_average_1m"].get<double>());
  const bool amx = p.contains("peak_amx_int8_gops");
  std::printf("%8s %16s %16s %16s", "threads", "read GB/s", "f32 GFLOP/s", "int8 GOP/s");
  if (amx) std::printf(" %16s %16s", "AMX int8 GOP/s", "AMX bf16 GFLOP/s");
  std::printf("\n");
  for (const auto& [threads, bandwidth] : p["read_bandwidth_gbs"].items()) {
    std::printf("%8s %16.1f %16.1f %16.1f", threads.c_str(), bandwidth.get<double>(),
                p["peak_f32_gflops"].value(threads, 0.0), p["peak_int8_gops"].value(threads, 0.0));
    if (amx) {
      const double bf16 = p.contains("peak_amx_bf16_gflops") ? p["peak_amx_bf16_gflops"].value(threads, 0.0) : 0.0;
      std::printf(" %16.1f %16.1f", p["peak_amx_int8_gops"].value(threads, 0.0), bf16);
    }
    std::printf("\n");
  }
  std::printf("\nper kernel, GOP/s by threads:\n");
  for (const auto& [kernel, by_threads] : p["kernels_gops"].items()) {
    std::string figures;
    for (const auto& [threads, gops] : by_threads.items()) figures += fmt::format("  {}: {:.1f}", threads, gops.get<double>());
    std::printf("  %-14s%s\n", kernel.c_str(), figures.c_str());
  }
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* cmd = app.add_subcommand("probe", "Measure this machine's bandwidth and peak throughput; save machine.json");
  cmd->add_option("-t,--threads", args->options.thread_counts, "Thread counts to measure (default 1, 2, 4, ..., all CPUs)")
      ->delimiter(',');
  cmd->add_option("-r,--repetitions", args->options.repetitions, "Best of this many runs per figure")->capture_default_str();
  cmd->add_option("--buffer-mib", args->options.buffer_mib, "Bandwidth buffer size (default max(1 GiB, 4 x L3))");
  cmd->add_flag("--json", args->json, "Print the profile as JSON instead of a table");
  cmd->add_flag("!--no-save", args->save, "Do not write machine.json");
  cmd->add_flag("--dist", args->dist, "Under mpirun: all-reduce and send/recv latency and bandwidth between the ranks");
  cmd->add_option("--device", args->device, "cpu, or cuda: copy/read bandwidth and BF16/FP8 matmul rate (cuda_device.json)")
      ->capture_default_str();
  cmd->callback([args] {
    if (args->dist) return run_dist(*args);
    if (args->device == "cuda") {
      const json profile = run_cuda_probe(args->options.repetitions);
      if (args->json) std::printf("%s\n", profile.dump(2).c_str());
      else print_cuda_probe(profile);
      if (args->save) {
        std::filesystem::create_directories(std::filesystem::path(cuda_profile_path()).parent_path());
        std::ofstream(cuda_profile_path()) << profile.dump(2) << "\n";
        std::fprintf(stderr, "saved %s\n", cuda_profile_path().c_str());
      }
      return;
    }
    if (args->device != "cpu") fail("--device must be cpu or cuda, got '{}'", args->device);
    const json profile = bench::run_probe(args->options);
    if (args->json) {
      std::printf("%s\n", profile.dump(2).c_str());
    } else {
      print_table(profile);
    }
    if (args->save) {
      // A CPU re-probe keeps the ranks' measurement, which only mpirun can redo.
      json saved = profile;
      if (auto old = bench::load_machine_profile(); old && old->contains("dist")) saved["dist"] = (*old)["dist"];
      bench::save_machine_profile(saved);
      std::fprintf(stderr, "saved %s\n", bench::machine_profile_path().c_str());
    }
  });
}

}  // namespace ridge::cli
