#pragma once
// Runs the same body on n threads, each pinned to its own CPU, released together, and times the
// whole team: the seconds from the common start until the last thread is done. The probe and the
// microbenchmarks measure throughput with it, so a slow thread counts as it would in a kernel.
#include <functional>
#include <vector>

namespace ridge::bench {

// The CPUs this process may run on (its affinity mask), in order.
std::vector<int> allowed_cpus();

// body(thread_index) on `n_threads` threads; thread i is pinned to allowed_cpus()[i % size].
double run_pinned_team(int n_threads, const std::function<void(int)>& body);

}  // namespace ridge::bench
