#pragma once
// `mpirun -np N ridge probe --dist`: what the messages between this job's ranks cost. All-reduce
// (float sum over all ranks) and send/recv (ping-pong between rank 0 and rank N-1) at 1 KiB to
// 16 MiB, with a latency + bandwidth line fitted per operation. The result is machine.json's
// "dist" entry, which `ridge plan --hw local` prices TP / PP messages with:
//   {"transport": "shared memory" | "network", "ranks": n, "hosts": [str, ...], "backend": "mpi",
//    "all_reduce": {"sizes": [{"bytes", "us", "algbw_gbs", "busbw_gbs"}, ...],
//                   "fit": {"latency_us", "bandwidth_gbs"}},        // algorithm bandwidth
//    "send_recv": {"sizes": [{"bytes", "us", "gbs"}, ...], "fit": {...}},  // one way
//    "samples": k, "probed_at": str}
#include <cstdint>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"

namespace ridge::bench {

struct DistProbeOptions {
  int samples = 5;                // median of this many timed samples per size
  double seconds_per_size = 0.2;  // per operation and size, spread over the samples
  int64_t min_bytes = int64_t(1) << 10;
  int64_t max_bytes = int64_t(16) << 20;  // sizes from min_bytes by powers of 4
};

// Every rank calls it with the same options (the calls are collectives, in lockstep); the figures
// are rank 0's, and the other ranks get an empty object. Error with a single rank.
nlohmann::json run_dist_probe(dist::Communicator& comm, const DistProbeOptions& options);

}  // namespace ridge::bench
