// ridge bench kv-transfer: what the KV transport moves per second, by put size.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/kv_transfer_bench.h"
#include "cli/commands.h"

namespace ridge::cli {

void add_bench_kv_transfer_command(CLI::App& bench) {
  struct Options {
    std::string transport = "ucx";
    int64_t region_mib = 256;
    std::vector<int64_t> sizes = {4096, 12288, 65536, 262144, 1 << 20, 4 << 20};
    int passes = 5;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = bench.add_subcommand("kv-transfer", "KV transport bandwidth by put size (the limit of a disaggregated transfer)");
  cmd->add_option("--transport", o->transport, "ucx or loopback")->check(CLI::IsMember({"ucx", "loopback"}))->capture_default_str();
  cmd->add_option("--region-mib", o->region_mib, "bytes moved per pass, MiB")->capture_default_str();
  cmd->add_option("--put-sizes", o->sizes, "bytes per put")->delimiter(',')->capture_default_str();
  cmd->add_option("--passes", o->passes, "timed passes per size")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] {
    const auto results = bench::run_kv_transfer_bench(o->transport, o->region_mib << 20, o->sizes, std::max(1, o->passes));
    if (o->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : results)
        out.push_back({{"put_bytes", r.put_bytes}, {"bytes", r.total_bytes}, {"best_gbs", r.gbs}, {"mean_gbs", r.mean_gbs}});
      fmt::print("{}\n", out.dump(2));
      return;
    }
    fmt::print("KV transport {}: {} MiB per pass, best / mean of {} passes\n", o->transport, o->region_mib, o->passes);
    fmt::print("| {:>10} | {:>9} | {:>9} |\n|{:-<12}|{:-<11}|{:-<11}|\n", "put bytes", "best GB/s", "mean GB/s", "", "", "");
    for (const auto& r : results) fmt::print("| {:>10} | {:>9.2f} | {:>9.2f} |\n", r.put_bytes, r.gbs, r.mean_gbs);
  });
}

}  // namespace ridge::cli
