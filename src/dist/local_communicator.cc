#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "dist/communicator.h"

namespace ridge::dist {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend() const override { return "local"; }
  void all_reduce_sum(float*, int64_t) override {}
  void all_gather(const void* send, int64_t bytes, void* recv) override { copy(send, bytes, recv); }
  void all_gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t>) override {
    copy(send, bytes, recv);
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t n) override {
    copy(send, n * int64_t(sizeof(float)), recv);
  }
  void all_to_all_v(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                    void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets) override {
    if (send_bytes[0] != recv_bytes[0]) fail("all_to_all_v on one rank: {} bytes sent, {} expected", send_bytes[0], recv_bytes[0]);
    copy(static_cast<const uint8_t*>(send) + send_offsets[0], send_bytes[0], static_cast<uint8_t*>(recv) + recv_offsets[0]);
  }
  void gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t>, int) override {
    copy(send, bytes, recv);
  }
  void broadcast(void*, int64_t, int) override {}
  void send(const void*, int64_t, int dst, int) override { fail("a single process has no rank {} to send to", dst); }
  void recv(void*, int64_t, int src, int) override { fail("a single process has no rank {} to receive from", src); }
  void barrier() override {}
  std::unique_ptr<Communicator> split(int, int) override { return std::make_unique<LocalCommunicator>(); }

 private:
  static void copy(const void* from, int64_t bytes, void* to) {
    if (from != to && bytes > 0) std::memmove(to, from, size_t(bytes));
  }
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

double dist_timeout_seconds() {
  const char* env = std::getenv("RIDGE_DIST_TIMEOUT");
  const double seconds = env ? std::atof(env) : 0.0;
  return seconds > 0 ? seconds : 120.0;
}

}  // namespace ridge::dist
