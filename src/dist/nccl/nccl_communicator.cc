// The communicator is non-blocking (config.blocking = 0), so init, group ends and kernels are all
// waited for by polling, where the timeout applies: first until NCCL has enqueued the work
// (ncclCommGetAsyncError leaves ncclInProgress), then until the stream has run it. An error or a
// timeout ends the job, as with MPI: a broken NCCL communicator leaves its peers waiting forever.
#include "dist/nccl/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "core/error.h"
#include "dist/mpi_communicator.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "the NCCL communicator needs NCCL 2.18 or newer (ncclCommSplit)"
#endif

namespace ridge::dist {
namespace {

using Clock = std::chrono::steady_clock;

size_t to_count(int64_t v, const char* what) {
  if (v < 0) fail("nccl {}: a negative size ({})", what, v);
  return size_t(v);
}

const uint8_t* at(const void* p, int64_t offset) { return static_cast<const uint8_t*>(p) + offset; }
uint8_t* at(void* p, int64_t offset) { return static_cast<uint8_t*>(p) + offset; }

class NcclCommunicator final : public Communicator {
 public:
  // Takes `comm` as returned by init or split (maybe still in progress) and waits until it is ready.
  NcclCommunicator(ncclComm_t comm, int device, const char* what) : comm_(comm), device_(device) {
    cudaSetDevice(device_);
    if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&barrier_, sizeof(float)) != cudaSuccess)
      die(what, cudaGetErrorString(cudaGetLastError()));
    wait(what);
    ncclCommUserRank(comm_, &rank_);
    ncclCommCount(comm_, &size_);
  }
  ~NcclCommunicator() override {
    cudaSetDevice(device_);
    // Finalize flushes what is still in flight with the peers; a communicator that cannot is aborted.
    const ncclResult_t r = ncclCommFinalize(comm_);
    if ((r == ncclSuccess || r == ncclInProgress) && settle(/*bounded=*/true) == nullptr)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
    cudaFree(barrier_);
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "nccl"; }

  void all_reduce_sum(float* data, int64_t n) override {
    run("all_reduce",
        [&] { return ncclAllReduce(data, data, to_count(n, "all_reduce"), ncclFloat, ncclSum, comm_, stream_); });
  }
  void all_gather(const void* send, int64_t bytes, void* recv) override {
    run("all_gather",
        [&] { return ncclAllGather(send, recv, to_count(bytes, "all_gather"), ncclUint8, comm_, stream_); });
  }
  // One broadcast per rank in a group, NCCL's way to gather uneven sizes.
  void all_gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts) override {
    if (int64_t(counts.size()) != size_ || counts[rank_] != bytes)
      fail("nccl all_gather: {} counts for {} ranks, {} bytes from rank {}", counts.size(), size_, bytes, rank_);
    run_group("all_gather", [&] {
      ncclResult_t r = ncclSuccess;
      int64_t offset = 0;
      for (int root = 0; root < size_ && r == ncclSuccess; offset += counts[root++])
        if (counts[root] > 0)
          r = ncclBroadcast(send, at(recv, offset), size_t(counts[root]), ncclUint8, root, comm_, stream_);
      return r;
    });
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t n) override {
    run("reduce_scatter", [&] {
      return ncclReduceScatter(send, recv, to_count(n, "reduce_scatter"), ncclFloat, ncclSum, comm_, stream_);
    });
  }
  void all_to_all_v(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                    void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets) override {
    if (send_bytes[rank_] != recv_bytes[rank_])
      fail("nccl all_to_all: rank {} sends itself {} bytes but expects {}", rank_, send_bytes[rank_],
           recv_bytes[rank_]);
    copy_to_self(at(send, send_offsets[rank_]), send_bytes[rank_], at(recv, recv_offsets[rank_]), "all_to_all");
    run_group("all_to_all", [&] {
      ncclResult_t r = ncclSuccess;
      for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
        if (peer == rank_) continue;
        if (send_bytes[peer] > 0)
          r = ncclSend(at(send, send_offsets[peer]), size_t(send_bytes[peer]), ncclUint8, peer, comm_, stream_);
        if (r == ncclSuccess && recv_bytes[peer] > 0)
          r = ncclRecv(at(recv, recv_offsets[peer]), size_t(recv_bytes[peer]), ncclUint8, peer, comm_, stream_);
      }
      return r;
    });
  }
  void gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts, int root) override {
    if (rank_ != root) {
      if (bytes > 0)
        run("gather", [&] { return ncclSend(send, to_count(bytes, "gather"), ncclUint8, root, comm_, stream_); });
      return;
    }
    if (int64_t(counts.size()) != size_) fail("nccl gather: {} counts for {} ranks", counts.size(), size_);
    int64_t own = 0;  // where the root's own bytes go
    for (int peer = 0; peer < rank_; ++peer) own += counts[peer];
    copy_to_self(send, bytes, at(recv, own), "gather");
    run_group("gather", [&] {
      ncclResult_t r = ncclSuccess;
      int64_t offset = 0;
      for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
        if (peer != rank_ && counts[peer] > 0)
          r = ncclRecv(at(recv, offset), size_t(counts[peer]), ncclUint8, peer, comm_, stream_);
        offset += counts[peer];
      }
      return r;
    });
  }
  void broadcast(void* data, int64_t bytes, int root) override { broadcast(data, bytes, root, true); }
  void broadcast_idle(void* data, int64_t bytes, int root) override { broadcast(data, bytes, root, false); }
  // No tags in NCCL: messages between two ranks match in call order.
  void send(const void* data, int64_t bytes, int dst, int) override {
    run("send", [&] { return ncclSend(data, to_count(bytes, "send"), ncclUint8, dst, comm_, stream_); });
  }
  void recv(void* data, int64_t bytes, int src, int) override {
    run("recv", [&] { return ncclRecv(data, to_count(bytes, "recv"), ncclUint8, src, comm_, stream_); });
  }
  void barrier() override { all_reduce_sum(barrier_, 1); }
  std::unique_ptr<Communicator> split(int color, int key) override {
    if (color < 0) fail("nccl split: color {} is negative (every rank must join a group)", color);
    ncclComm_t sub = nullptr;
    run("split", [&] { return ncclCommSplit(comm_, color, key, &sub, nullptr); });  // nullptr: the parent's config
    return std::make_unique<NcclCommunicator>(sub, device_, "split");
  }

 private:
  static constexpr const char* kTimedOut = "timed out";

  void broadcast(void* data, int64_t bytes, int root, bool bounded) {
    const size_t n = to_count(bytes, "broadcast");
    const auto enqueue = [&] { return ncclBroadcast(data, data, n, ncclUint8, root, comm_, stream_); };
    run("broadcast", enqueue, bounded);
  }

  // Enqueues (on this rank's device: the calling thread may have another one current) and waits.
  template <typename Enqueue>
  void run(const char* what, Enqueue enqueue, bool bounded = true) {
    cudaSetDevice(device_);
    check(enqueue(), what);
    wait(what, bounded);
  }
  template <typename Enqueue>
  void run_group(const char* what, Enqueue enqueue) {
    run(what, [&] {
      if (const ncclResult_t r = ncclGroupStart(); r != ncclSuccess) return r;
      const ncclResult_t r = enqueue();  // must not throw: the group would stay open
      const ncclResult_t end = ncclGroupEnd();
      return r != ncclSuccess ? r : end;
    });
  }
  void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess && r != ncclInProgress) die(what, ncclGetErrorString(r));
  }
  void copy_to_self(const void* from, int64_t bytes, void* to, const char* what) {
    cudaSetDevice(device_);
    if (bytes > 0 && cudaMemcpyAsync(to, from, size_t(bytes), cudaMemcpyDefault, stream_) != cudaSuccess)
      die(what, cudaGetErrorString(cudaGetLastError()));
  }

  // Polls until NCCL has enqueued everything and the stream has run it: null when done, else why not.
  const char* settle(bool bounded) {
    const Clock::time_point start = Clock::now();
    const double timeout = dist_timeout_seconds();
    for (int64_t polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      if (const ncclResult_t r = ncclCommGetAsyncError(comm_, &state); r != ncclSuccess) return ncclGetErrorString(r);
      if (state != ncclSuccess && state != ncclInProgress) return ncclGetErrorString(state);
      if (state == ncclSuccess) {
        const cudaError_t e = cudaStreamQuery(stream_);
        if (e == cudaSuccess) return nullptr;
        if (e != cudaErrorNotReady) return cudaGetErrorString(e);
      }
      if (polls < 256) continue;  // the peers are usually at the same step
      if ((polls & 63) == 0) {
        waited_ = std::chrono::duration<double>(Clock::now() - start).count();
        if (bounded && waited_ > timeout) return kTimedOut;
        if (waited_ > 0.005) {
          const timespec nap{0, bounded ? 100'000 : 1'000'000};
          nanosleep(&nap, nullptr);
          continue;
        }
      }
      sched_yield();
    }
  }
  void wait(const char* what, bool bounded = true) {
    const char* why = settle(bounded);
    if (why == nullptr) return;
    if (why != kTimedOut) die(what, why);
    std::fprintf(stderr,
                 "ridge: rank %d: nccl %s got no answer from the other ranks in %.0f s: a rank died or hangs "
                 "(RIDGE_DIST_TIMEOUT sets the limit); ending the job\n",
                 rank_, what, waited_);
    ncclCommAbort(comm_);
    mpi_abort(3);
  }
  [[noreturn]] void die(const char* what, const char* why) {
    std::fprintf(stderr, "ridge: rank %d: nccl %s failed: %s; ending the job\n", rank_, what, why);
    ncclCommAbort(comm_);
    mpi_abort(3);
  }

  ncclComm_t comm_;
  int device_;
  cudaStream_t stream_ = nullptr;
  float* barrier_ = nullptr;  // one float, the barrier's all-reduce
  int rank_ = 0, size_ = 1;
  double waited_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int cuda_device) {
  if (bootstrap.backend() == "nccl") fail("the NCCL communicator needs a host-memory bootstrap (MPI or local)");
  if (const cudaError_t e = cudaSetDevice(cuda_device); e != cudaSuccess)
    fail("nccl: CUDA device {}: {}", cuda_device, cudaGetErrorString(e));
  ncclUniqueId id{};
  const ncclResult_t made = bootstrap.rank() == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
  if (made != ncclSuccess) fail("ncclGetUniqueId: {}", ncclGetErrorString(made));
  bootstrap.broadcast(&id, sizeof id, 0);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t r = ncclCommInitRankConfig(&comm, bootstrap.size(), id, bootstrap.rank(), &config);
  if (r != ncclSuccess && r != ncclInProgress) fail("ncclCommInitRank: {}", ncclGetErrorString(r));
  return std::make_unique<NcclCommunicator>(comm, cuda_device, "ncclCommInitRank");
}

}  // namespace ridge::dist
