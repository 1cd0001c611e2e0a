#pragma once
// How much memory this process may use before the kernel kills it: the machine's memory, or the
// limit of the cgroup it runs in when that is tighter (a container's, a systemd unit's, a test's),
// and how much it holds now. The engine sizes its KV pool inside the limit and refuses work (503)
// rather than grow past it.
#include <cstdint>
#include <string>

namespace ridge {

struct MemoryLimit {
  int64_t bytes = 0;   // the tighter of the two
  std::string source;  // "physical memory", or the cgroup file that set it
  bool cgroup = false; // a cgroup's limit (tighter than the machine)
  std::string dir;     // that cgroup's directory
  int version = 0;     // its hierarchy: 1 or 2
};

// Reads /proc/self/cgroup and the memory controller's limit of that cgroup and of its ancestors
// (cgroup v2 memory.max, v1 memory.limit_in_bytes), or of the root mount when the process sits in
// the root; RIDGE_CGROUP_ROOT replaces /sys/fs/cgroup (tests).
MemoryLimit memory_limit();
// Resident set of this process (/proc/self/statm), bytes.
int64_t resident_bytes();
// What counts against the limit now: a cgroup's working set (its usage less the inactive file
// pages the kernel reclaims before it kills anything; every process in the cgroup counts), else
// this process's resident set.
int64_t memory_in_use(const MemoryLimit& limit);

}  // namespace ridge
