#pragma once
// What the operating system and CPUID say about this machine: name, CPUs, caches, ISA, memory.
#include <cstdint>
#include <string>
#include <vector>

namespace ridge::bench {

struct SystemInfo {
  std::string cpu;                // "model name" from /proc/cpuinfo
  int cores = 1;                  // CPUs this process may run on
  int64_t l1d_kib = 0, l2_kib = 0, l3_kib = 0;  // per instance, as the kernel reports them (0 = unknown)
  std::vector<std::string> isa;   // the x86 extensions that matter to ridge's kernels, when present
  double memory_gib = 0;          // physical memory
};

SystemInfo probe_system();

// True when the CPU (and OS) support `feature`, a name from SystemInfo::isa ("avx2", "avx512vnni").
bool cpu_has(const std::string& feature);

}  // namespace ridge::bench
