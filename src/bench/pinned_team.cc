#include "bench/pinned_team.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ridge::bench {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  if (cpus.empty()) {
    const int n = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int cpu = 0; cpu < n; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

double run_pinned_team(int n_threads, const std::function<void(int)>& body) {
  using Clock = std::chrono::steady_clock;
  const std::vector<int> cpus = allowed_cpus();
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> ends(static_cast<size_t>(n_threads));
  std::vector<std::thread> team;
  team.reserve(size_t(n_threads));
  for (int i = 0; i < n_threads; ++i) {
    team.emplace_back([&, i] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[size_t(i) % cpus.size()], &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      body(i);
      ends[size_t(i)] = Clock::now();
    });
  }
  while (ready.load() < n_threads) std::this_thread::yield();
  const Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : team) t.join();
  Clock::time_point last = start;
  for (const auto& end : ends) last = std::max(last, end);
  return std::chrono::duration<double>(last - start).count();
}

}  // namespace ridge::bench
