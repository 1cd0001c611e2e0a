#include "bench/probe_dist.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "bench/probe.h"
#include "core/error.h"
#include "plan/comm_model.h"

namespace ridge::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int64_t kHostBytes = 256;
constexpr int kPingTag = 7;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Every rank's host name, gathered: one distinct name means the ranks talk through shared memory.
std::vector<std::string> distinct_hosts(dist::Communicator& comm) {
  char name[kHostBytes] = {};
  gethostname(name, kHostBytes - 1);
  std::vector<char> all(size_t(kHostBytes * comm.size()));
  comm.all_gather(name, kHostBytes, all.data());
  std::vector<std::string> hosts;
  for (int r = 0; r < comm.size(); ++r) {
    std::string h(all.data() + r * kHostBytes);
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  return hosts;
}

// Seconds one call of `op` takes on rank 0: two warm-up calls (connections, buffers), then
// samples of k calls each, the median sample. k comes from rank 0's timing of one call and is
// broadcast, so every rank makes the same calls.
template <typename Op>
double time_op(dist::Communicator& comm, const DistProbeOptions& o, Op op) {
  op();
  op();
  comm.barrier();
  const Clock::time_point t0 = Clock::now();
  op();
  const double one = std::max(since(t0), 1e-7);
  int64_t k = std::clamp(int64_t(o.seconds_per_size / o.samples / one), int64_t(1), int64_t(10000));
  comm.broadcast(&k, sizeof k, 0);
  std::vector<double> samples;
  for (int s = 0; s < o.samples; ++s) {
    comm.barrier();  // start every sample together
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < k; ++i) op();
    samples.push_back(since(start) / double(k));
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

json fit_json(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  const plan::CommFit f = plan::fit_comm(bytes, seconds);
  return {{"latency_us", f.latency_s * 1e6}, {"bandwidth_gbs", f.bandwidth * 1e-9}};
}

}  // namespace

json run_dist_probe(dist::Communicator& comm, const DistProbeOptions& options) {
  const int n = comm.size();
  if (n < 2)
    fail("probe --dist measures the messages between the ranks of an MPI job; start it with mpirun: "
         "mpirun -np 2 ridge probe --dist");
  DistProbeOptions o = options;
  o.samples = std::max(1, o.samples);
  const std::vector<std::string> hosts = distinct_hosts(comm);
  const int last = n - 1;
  std::vector<float> buffer(size_t(o.max_bytes / 4), 0.0f);  // zeros: sums stay finite

  json all_reduce = json::array(), send_recv = json::array();
  std::vector<double> sizes, reduce_s, ping_s;
  for (int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
    const double ar = time_op(comm, o, [&] { comm.all_reduce_sum(buffer.data(), bytes / 4); });
    // Ping-pong: half the round trip is one message's time. The ranks between only keep step.
    const double round_trip = time_op(comm, o, [&] {
      if (comm.rank() == 0) {
        comm.send(buffer.data(), bytes, last, kPingTag);
        comm.recv(buffer.data(), bytes, last, kPingTag);
      } else if (comm.rank() == last) {
        comm.recv(buffer.data(), bytes, 0, kPingTag);
        comm.send(buffer.data(), bytes, 0, kPingTag);
      }
    });
    const double one_way = round_trip / 2;
    const double algbw = double(bytes) / ar;
    sizes.push_back(double(bytes));
    reduce_s.push_back(ar);
    ping_s.push_back(one_way);
    all_reduce.push_back({{"bytes", bytes}, {"us", ar * 1e6}, {"algbw_gbs", algbw * 1e-9},
                          {"busbw_gbs", algbw * 2.0 * double(n - 1) / double(n) * 1e-9}});
    send_recv.push_back({{"bytes", bytes}, {"us", one_way * 1e6}, {"gbs", double(bytes) / one_way * 1e-9}});
  }
  if (comm.rank() != 0) return json::object();  // the other ranks' clocks saw only their part
  return {{"transport", hosts.size() == 1 ? "shared memory" : "network"},
          {"ranks", n},
          {"hosts", hosts},
          {"backend", std::string(comm.backend())},
          {"samples", o.samples},
          {"probed_at", now_utc()},
          {"all_reduce", {{"sizes", all_reduce}, {"fit", fit_json(sizes, reduce_s)}}},
          {"send_recv", {{"sizes", send_recv}, {"fit", fit_json(sizes, ping_s)}}}};
}

}  // namespace ridge::bench
