#pragma once
// What the messages between devices cost: a latency plus bytes over a bandwidth, per operation.
// Either measured on this machine (`mpirun -np N ridge probe --dist` fits the line) or the
// generic figures of a datasheet link. Every TP / PP / EP communication time the planner
// predicts goes through the functions here.
#include <cstdint>
#include <span>
#include <string>

namespace ridge::plan {

// time = latency_s + bytes / bandwidth.
struct CommFit {
  double latency_s = 0;
  double bandwidth = 0;  // bytes/s
  double seconds(double bytes) const { return latency_s + bytes / bandwidth; }
};

// Least squares on relative error (each point weighted by 1 / time^2), so the small messages set
// the latency and the large ones the bandwidth; a plain fit lets the noise of a 16 MiB message
// swamp a microsecond intercept. The latency is clamped at 0. Error with fewer than two distinct
// sizes or a slope that is not positive.
CommFit fit_comm(std::span<const double> bytes, std::span<const double> seconds);

struct CommModel {
  // All-reduce with the bandwidth as NCCL-tests' bus bandwidth (algorithm bandwidth x n / (2 (n-1))),
  // which a ring keeps constant across group sizes: a fit at one rank count carries to others.
  CommFit all_reduce_bus;
  CommFit send_recv;         // one message between two ranks, one way
  bool measured = false;
  bool shares_host = false;  // the ranks split one host's memory bandwidth and cores
  int64_t ranks = 0;         // measured: the job's rank count
  std::string transport;     // measured: "shared memory" or "network"
  std::string source;        // measured: the profile's path
};

// The datasheet link (bytes/s, one direction) with a fixed latency per message.
CommModel generic_comm_model(double link_bw, double latency_s);
// A measured all-reduce fit (algorithm bandwidth) of a job of `ranks` ranks, and its send/recv fit.
CommModel measured_comm_model(const CommFit& all_reduce, const CommFit& send_recv, int64_t ranks,
                              const std::string& transport, const std::string& source);

// An all-reduce of `bytes` per rank among n ranks (0 when n is 1).
double all_reduce_seconds(const CommModel& m, double bytes, int64_t n);
// An all-gather among n ranks, each contributing `bytes_per_rank` (0 when n is 1): a ring moves
// (n - 1) blocks through every link, priced on the all-reduce's bus bandwidth (NCCL-tests' bus
// bandwidth is the same link rate for both).
double all_gather_seconds(const CommModel& m, double bytes_per_rank, int64_t n);
// One message of `bytes`.
double send_seconds(const CommModel& m, double bytes);

// A decode step's tensor-parallel all-reduces: 2 per layer (after attention and after the FFN)
// of the hidden state, `hidden_bytes` = tokens x n_embd x element size.
double tp_comm_seconds(const CommModel& m, int64_t n_layer, double hidden_bytes, int64_t tp);
// A step's pipeline hops: the hidden state sent from each stage to the next.
double pp_comm_seconds(const CommModel& m, double hidden_bytes, int64_t pp);

// One line for a report: where the figures come from and what they are.
std::string describe_comm_model(const CommModel& m);

}  // namespace ridge::plan
