// Every call is non-blocking underneath and waited for by wait_for(): a short spin (the peer is
// usually computing the same step), then yields (ranks may share cores), then naps; a call that
// gets no answer within dist_timeout_seconds() ends the job with a message instead of hanging.
#include "dist/mpi_communicator.h"

// The C API only: the deprecated C++ bindings need a library of their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "core/error.h"

namespace ridge::dist {
namespace {

using Clock = std::chrono::steady_clock;

int to_int(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(INT32_MAX)) fail("{}: {} bytes is outside what one MPI call carries", what, v);
  return int(v);
}

// MPI's int counts and displacements of byte counts laid one after another.
void counts_and_offsets(std::span<const int64_t> counts, const char* what, std::vector<int>& c, std::vector<int>& d) {
  int64_t offset = 0;
  for (int64_t n : counts) {
    c.push_back(to_int(n, what));
    d.push_back(to_int(offset, what));
    offset += n;
  }
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    if (owned_) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "mpi"; }

  void all_reduce_sum(float* data, int64_t n) override {
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, data, to_int(n, "all_reduce"), MPI_FLOAT, MPI_SUM, comm_, &r);
    wait_for(r, "all_reduce");
  }
  void all_gather(const void* send, int64_t bytes, void* recv) override {
    MPI_Request r;
    MPI_Iallgather(send, to_int(bytes, "all_gather"), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_, &r);
    wait_for(r, "all_gather");
  }
  void all_gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts) override {
    std::vector<int> c, d;
    counts_and_offsets(counts, "all_gather", c, d);
    MPI_Request r;
    MPI_Iallgatherv(send, to_int(bytes, "all_gather"), MPI_BYTE, recv, c.data(), d.data(), MPI_BYTE, comm_, &r);
    wait_for(r, "all_gather");
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t n) override {
    MPI_Request r;
    MPI_Ireduce_scatter_block(send, recv, to_int(n, "reduce_scatter"), MPI_FLOAT, MPI_SUM, comm_, &r);
    wait_for(r, "reduce_scatter");
  }
  void all_to_all_v(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                    void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets) override {
    const auto n = size_t(size_);
    std::vector<int> sc(n), so(n), rc(n), ro(n);
    for (size_t i = 0; i < n; ++i) {
      sc[i] = to_int(send_bytes[i], "all_to_all");
      so[i] = to_int(send_offsets[i], "all_to_all");
      rc[i] = to_int(recv_bytes[i], "all_to_all");
      ro[i] = to_int(recv_offsets[i], "all_to_all");
    }
    MPI_Request r;
    MPI_Ialltoallv(send, sc.data(), so.data(), MPI_BYTE, recv, rc.data(), ro.data(), MPI_BYTE, comm_, &r);
    wait_for(r, "all_to_all");
  }
  void gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts, int root) override {
    std::vector<int> c, d;
    if (rank_ == root) counts_and_offsets(counts, "gather", c, d);
    MPI_Request r;
    MPI_Igatherv(send, to_int(bytes, "gather"), MPI_BYTE, recv, c.data(), d.data(), MPI_BYTE, root, comm_, &r);
    wait_for(r, "gather");
  }
  void broadcast(void* data, int64_t bytes, int root) override {
    MPI_Request r;
    MPI_Ibcast(data, to_int(bytes, "broadcast"), MPI_BYTE, root, comm_, &r);
    wait_for(r, "broadcast");
  }
  void broadcast_idle(void* data, int64_t bytes, int root) override {
    MPI_Request r;
    MPI_Ibcast(data, to_int(bytes, "broadcast"), MPI_BYTE, root, comm_, &r);
    wait_for(r, "broadcast", /*bounded=*/false);
  }
  void send(const void* data, int64_t bytes, int dst, int tag) override {
    MPI_Request r;
    MPI_Isend(data, to_int(bytes, "send"), MPI_BYTE, dst, tag, comm_, &r);
    wait_for(r, "send");
  }
  void recv(void* data, int64_t bytes, int src, int tag) override {
    MPI_Request r;
    MPI_Irecv(data, to_int(bytes, "recv"), MPI_BYTE, src, tag, comm_, &r);
    wait_for(r, "recv");
  }
  void barrier() override {
    MPI_Request r;
    MPI_Ibarrier(comm_, &r);
    wait_for(r, "barrier");
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub;
    MPI_Comm_split(comm_, color, key, &sub);
    return std::make_unique<MpiCommunicator>(sub, true);
  }

 private:
  void wait_for(MPI_Request& r, const char* what, bool bounded = true) {
    const Clock::time_point start = Clock::now();
    const double timeout = dist_timeout_seconds();
    for (int64_t polls = 0;; ++polls) {
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (polls < 256) continue;
      if ((polls & 63) == 0) {
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        if (bounded && waited > timeout) {
          int world = 0;
          MPI_Comm_rank(MPI_COMM_WORLD, &world);
          std::fprintf(stderr,
                       "ridge: rank %d: %s got no answer from the other ranks in %.0f s: a rank died or hangs "
                       "(RIDGE_DIST_TIMEOUT sets the limit); ending the job\n",
                       world, what, waited);
          mpi_abort(3);
        }
        if (waited > 0.005) {
          const timespec nap{0, bounded ? 100'000 : 1'000'000};
          nanosleep(&nap, nullptr);
          continue;
        }
      }
      sched_yield();
    }
  }

  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool mpi_built() { return true; }

bool mpi_init(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) fail("this MPI library does not allow calls from more than one thread");
  // An MPI error ends the whole job with the library's message (the default, said explicitly).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return true;
}

void mpi_finalize() { MPI_Finalize(); }

std::unique_ptr<Communicator> make_mpi_world() { return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false); }

void mpi_abort(int code) {
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ridge::dist
