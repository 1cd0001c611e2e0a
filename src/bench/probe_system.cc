#include "bench/probe_system.h"

#include <unistd.h>

#include <fstream>
#include <string_view>

#include "bench/pinned_team.h"

namespace ridge::bench {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K" / "2048K" / "480M" -> KiB.
int64_t parse_kib(const std::string& size) {
  if (size.empty()) return 0;
  const int64_t n = std::atoll(size.c_str());
  switch (size.back()) {
    case 'K': return n;
    case 'M': return n * 1024;
    case 'G': return n * 1024 * 1024;
    default: return n / 1024;
  }
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(colon + 2);
  }
  return "unknown";
}

// Caches of cpu0 from sysfs; sysconf when sysfs has nothing (containers without /sys).
void read_caches(SystemInfo& info) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "type");
    const int64_t kib = parse_kib(read_line(dir + "size"));
    if (level == "1" && type == "Data") info.l1d_kib = kib;
    if (level == "2" && type != "Instruction") info.l2_kib = kib;
    if (level == "3" && type != "Instruction") info.l3_kib = kib;
  }
  if (info.l1d_kib == 0) info.l1d_kib = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE)) / 1024;
  if (info.l2_kib == 0) info.l2_kib = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE)) / 1024;
  if (info.l3_kib == 0) info.l3_kib = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE)) / 1024;
}

// __builtin_cpu_supports needs literal names, hence one line per feature.
struct Feature {
  const char* name;
  bool present;
};

std::vector<Feature> features() {
  __builtin_cpu_init();
  return {
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"f16c", __builtin_cpu_supports("f16c") != 0},
      {"avxvnni", __builtin_cpu_supports("avxvnni") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni") != 0},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
      {"avx512fp16", __builtin_cpu_supports("avx512fp16") != 0},
      {"amx-tile", __builtin_cpu_supports("amx-tile") != 0},
      {"amx-int8", __builtin_cpu_supports("amx-int8") != 0},
      {"amx-bf16", __builtin_cpu_supports("amx-bf16") != 0},
  };
}

}  // namespace

bool cpu_has(const std::string& feature) {
  for (const Feature& f : features())
    if (feature == f.name) return f.present;
  return false;
}

SystemInfo probe_system() {
  SystemInfo info;
  info.cpu = cpu_name();
  info.cores = int(allowed_cpus().size());
  read_caches(info);
  for (const Feature& f : features())
    if (f.present) info.isa.emplace_back(f.name);
  info.memory_gib = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)) / double(1ull << 30);
  return info;
}

}  // namespace ridge::bench
