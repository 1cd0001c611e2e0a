#include "core/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace ridge {
namespace {

// A limit file's value: bytes, or none for "max" / the v1 "unlimited" (a value near 2^63).
int64_t read_limit(const std::string& path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word == "max") return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(word.c_str(), &end, 10);
  if (end == word.c_str() || v == 0 || v >= (1ull << 62)) return 0;
  return int64_t(v);
}

// The cgroup path of this process for a v2 hierarchy ("0::/path") or a v1 memory controller
// ("N:memory:/path" or "N:...,memory,...:/path").
bool own_cgroup(bool v2, std::string& out) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    bool match = v2 ? controllers.empty() : false;
    if (!v2) {
      std::stringstream list(controllers);
      for (std::string c; std::getline(list, c, ',');) match = match || c == "memory";
    }
    if (match) {
      out = line.substr(b + 1);
      return true;
    }
  }
  return false;
}

// The tightest limit of `file` in the cgroup `path` under `mount` and its ancestors.
void tightest(const std::string& mount, std::string path, const char* file, MemoryLimit& best) {
  for (;;) {
    const std::string at = mount + (path == "/" ? "" : path) + "/" + file;
    const int64_t v = read_limit(at);
    if (v > 0 && v < best.bytes) best = {v, at, true, mount + (path == "/" ? "" : path), std::string(file) == "memory.max" ? 2 : 1};
    if (path.empty() || path == "/") break;
    const auto cut = path.rfind('/');
    path = cut == 0 || cut == std::string::npos ? "/" : path.substr(0, cut);
  }
}

}  // namespace

MemoryLimit memory_limit() {
  MemoryLimit best{int64_t(::sysconf(_SC_PHYS_PAGES)) * int64_t(::sysconf(_SC_PAGE_SIZE)), "physical memory", false};
  const char* root_env = std::getenv("RIDGE_CGROUP_ROOT");
  const std::string root = root_env && *root_env ? root_env : "/sys/fs/cgroup";
  std::string path;
  if (own_cgroup(true, path)) {  // v2: the unified hierarchy at the root, or beside v1 at .../unified
    for (const std::string& mount : {root, root + "/unified"})
      if (std::ifstream(mount + "/cgroup.controllers")) {
        tightest(mount, path, "memory.max", best);
        break;
      }
  }
  if (own_cgroup(false, path)) tightest(root + "/memory", path, "memory.limit_in_bytes", best);
  return best;
}

int64_t memory_in_use(const MemoryLimit& limit) {
  if (!limit.cgroup) return resident_bytes();
  const int64_t usage = read_limit(limit.dir + (limit.version == 2 ? "/memory.current" : "/memory.usage_in_bytes"));
  std::ifstream stat(limit.dir + "/memory.stat");
  const std::string inactive = limit.version == 2 ? "inactive_file" : "total_inactive_file";
  std::string key;
  int64_t value = 0, reclaimable = 0;
  while (stat >> key >> value)
    if (key == inactive) reclaimable = value;
  return std::max<int64_t>(0, usage - reclaimable);
}

int64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * int64_t(::sysconf(_SC_PAGE_SIZE));
}

}  // namespace ridge
