#include "core/memory_limit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/memory_budget.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

// This process's cgroup path in the hierarchy whose controller list matches (as /proc/self/cgroup says).
std::string own_path(bool v2) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    const std::string controllers = line.substr(a + 1, b - a - 1);
    if (v2 ? controllers.empty() : controllers.find("memory") != std::string::npos) return line.substr(b + 1);
  }
  return "";
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A fake cgroup tree under a temporary root (RIDGE_CGROUP_ROOT), removed afterwards.
class FakeCgroups : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ridge-cgroup-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    ::setenv("RIDGE_CGROUP_ROOT", root_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("RIDGE_CGROUP_ROOT");
    fs::remove_all(root_);
  }
  fs::path under(const std::string& mount, const std::string& cgroup) const {
    return cgroup == "/" || cgroup.empty() ? root_ / mount : root_ / mount / cgroup.substr(1);
  }
  fs::path root_;
};

TEST_F(FakeCgroups, NoLimitFileMeansThePhysicalMemory) {
  const MemoryLimit m = memory_limit();
  EXPECT_FALSE(m.cgroup);
  EXPECT_EQ(m.source, "physical memory");
  EXPECT_GT(m.bytes, int64_t(1) << 26);
}

TEST_F(FakeCgroups, AVersionOneLimitAndItsWorkingSet) {
  const std::string path = own_path(false);
  if (path.empty()) GTEST_SKIP() << "this kernel reports no v1 memory controller for this process";
  const fs::path dir = under("memory", path);
  write(dir / "memory.limit_in_bytes", "314572800\n");
  write(dir / "memory.usage_in_bytes", "209715200\n");
  write(dir / "memory.stat", "cache 1000\ntotal_inactive_file 52428800\ntotal_rss 100\n");
  const MemoryLimit m = memory_limit();
  EXPECT_TRUE(m.cgroup);
  EXPECT_EQ(m.bytes, 314572800);
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(memory_in_use(m), 209715200 - 52428800);  // inactive file pages are reclaimed before a kill
  // "Unlimited" (a value near 2^63) is no limit.
  write(dir / "memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_FALSE(memory_limit().cgroup);
}

TEST_F(FakeCgroups, AVersionTwoLimitOnAnAncestorCounts) {
  const std::string path = own_path(true);
  write(root_ / "cgroup.controllers", "cpu io memory pids\n");
  fs::path dir = under("", path);
  write(dir / "memory.max", "max\n");
  if (path != "/") write(root_ / "memory.max", "max\n");
  EXPECT_FALSE(memory_limit().cgroup);
  // The tightest of the cgroup and its ancestors (the root's own file, if the process sits in it).
  const fs::path parent = path == "/" ? dir : dir.parent_path();
  write(parent / "memory.max", "1073741824\n");
  write(parent / "memory.current", "536870912\n");
  write(parent / "memory.stat", "anon 1\ninactive_file 1048576\n");
  const MemoryLimit m = memory_limit();
  EXPECT_TRUE(m.cgroup);
  EXPECT_EQ(m.bytes, int64_t(1) << 30);
  EXPECT_EQ(m.version, 2);
  EXPECT_EQ(memory_in_use(m), (int64_t(1) << 29) - (int64_t(1) << 20));
}

TEST(MemoryBudget, ThePoolShrinksToFitAndLongPromptsAreRefused) {
  MemoryBudget b;
  b.limit = {int64_t(300) << 20, "test limit", true, "/nonexistent", 1};
  b.resident_at_start = int64_t(200) << 20;
  b.reserve = int64_t(64) << 20;
  int64_t pool = int64_t(180) << 20;
  ASSERT_TRUE(b.fit_pool(pool, int64_t(1) << 20));
  EXPECT_EQ(pool, int64_t(36) << 20);
  EXPECT_TRUE(b.lowered());
  b.context = 1500;
  const std::string why = b.refuse(1600);
  EXPECT_NE(why.find("1500 tokens"), std::string::npos) << why;
  EXPECT_NE(why.find("300 MiB"), std::string::npos) << why;
  EXPECT_NE(b.describe().find("leaves the KV pool 36 MiB"), std::string::npos) << b.describe();
  int64_t huge = int64_t(180) << 20;
  EXPECT_FALSE(b.fit_pool(huge, int64_t(40) << 20));  // not even the minimum fits
  MemoryBudget machine;  // the machine's memory: the pool's own default already holds a fifth of it
  machine.limit = {int64_t(8) << 30, "physical memory", false, "", 0};
  int64_t any = int64_t(100) << 30;
  EXPECT_TRUE(machine.fit_pool(any, 1));
  EXPECT_FALSE(machine.lowered());
  EXPECT_EQ(machine.refuse(100), "");
}

}  // namespace
}  // namespace ridge
