#pragma once
// The collectives and point-to-point messages ranks exchange, one interface over the runtimes
// that carry them: MPI between CPU processes (shared memory inside a host, TCP or UCX between
// hosts), NCCL between CUDA devices, and a one-rank stand-in when ridge runs alone. Pointers are
// host memory for MPI and device memory for NCCL. Every call is blocking; a call that gets no
// answer within the communicator's timeout fails the process with a message naming it (a peer
// that died or hangs must not leave the rest waiting forever).
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace ridge::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view backend() const = 0;  // "local", "mpi", "nccl"

  // data (n floats on every rank) becomes the element-wise sum over ranks.
  virtual void all_reduce_sum(float* data, int64_t n) = 0;
  // recv (size() * bytes) becomes every rank's `bytes` of send, in rank order.
  virtual void all_gather(const void* send, int64_t bytes, void* recv) = 0;
  // recv becomes every rank's counts[r] bytes of send, in rank order (counts[rank()] == bytes).
  virtual void all_gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts) = 0;
  // recv (n floats) becomes the sum over ranks of their send[rank() * n .. (rank() + 1) * n).
  virtual void reduce_scatter_sum(const float* send, float* recv, int64_t n) = 0;
  // Rank r sends send_bytes[d] bytes (at send_offsets[d]) to each rank d and receives
  // recv_bytes[s] bytes (at recv_offsets[s]) from each rank s.
  virtual void all_to_all_v(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                            void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets) = 0;
  // Gathers each rank's bytes (counts[r] of them) into recv on `root`, in rank order.
  virtual void gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts, int root) = 0;
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  // A broadcast the receivers may wait for indefinitely, napping (a worker rank waiting for the
  // next step of an idle server): no timeout, little CPU.
  virtual void broadcast_idle(void* data, int64_t bytes, int root) { broadcast(data, bytes, root); }
  virtual void send(const void* data, int64_t bytes, int dst, int tag) = 0;
  virtual void recv(void* data, int64_t bytes, int src, int tag) = 0;
  virtual void barrier() = 0;
  // The ranks that pass the same color, ordered by key then rank: a communicator of their own
  // (a tensor-parallel group inside one pipeline stage, say). Every rank must call it.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
};

// Seconds a blocking call waits for its peers before it fails the process (RIDGE_DIST_TIMEOUT,
// default 120).
double dist_timeout_seconds();

// The communicator of a single process: collectives return their input, messages are an error.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace ridge::dist
