// A collective is two barriers: every rank publishes its buffer, each copies what it needs from
// the others', and no buffer is reused until all have copied. Messages are queues per
// (source, destination, tag), filled by send and drained by recv.
#include "dist/thread_communicator.h"

#include <algorithm>
#include <barrier>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "core/error.h"

namespace ridge::dist {
namespace {

// memcpy that allows empty buffers (a rank with nothing to send may pass a null pointer).
void copy_bytes(void* to, const void* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, size_t(bytes));
}

struct Group {
  explicit Group(int n) : size(n), sync(n), published(size_t(n)), counts(size_t(n)), keys(size_t(n)), children(size_t(n)) {}
  int size;
  std::barrier<> sync;
  std::vector<const void*> published;
  std::vector<int64_t> counts;
  std::vector<std::pair<int, int>> keys;        // split: (color, key) per rank
  std::vector<std::shared_ptr<Group>> children;  // split: each rank's new group
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<uint8_t>>> mail;
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<Group> g, int rank) : g_(std::move(g)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return g_->size; }
  std::string_view backend() const override { return "threads"; }

  void all_reduce_sum(float* data, int64_t n) override {
    std::vector<float> sum(size_t(n), 0.0f);
    collective(data, [&] {
      for (int r = 0; r < g_->size; ++r) {  // rank order: every rank adds alike
        const auto* x = static_cast<const float*>(g_->published[size_t(r)]);
        for (int64_t i = 0; i < n; ++i) sum[size_t(i)] += x[i];
      }
    });
    copy_bytes(data, sum.data(), n * 4);
  }
  void all_gather(const void* send, int64_t bytes, void* recv) override {
    std::vector<int64_t> counts(size_t(g_->size), bytes);
    all_gather_v(send, bytes, recv, counts);
  }
  void all_gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts) override {
    collective(send, [&] {
      auto* out = static_cast<uint8_t*>(recv);
      for (int r = 0; r < g_->size; ++r) {
        copy_bytes(out, g_->published[size_t(r)], counts[size_t(r)]);
        out += counts[size_t(r)];
      }
    });
  }
  void reduce_scatter_sum(const float* send, float* recv, int64_t n) override {
    collective(send, [&] {
      for (int64_t i = 0; i < n; ++i) recv[i] = 0.0f;
      for (int r = 0; r < g_->size; ++r) {
        const auto* x = static_cast<const float*>(g_->published[size_t(r)]) + rank_ * n;
        for (int64_t i = 0; i < n; ++i) recv[i] += x[i];
      }
    });
  }
  void all_to_all_v(const void* send, std::span<const int64_t> send_bytes, std::span<const int64_t> send_offsets,
                    void* recv, std::span<const int64_t> recv_bytes, std::span<const int64_t> recv_offsets) override {
    // Publish the offsets next to the data: a rank reads its part of every other rank's buffer.
    struct Out {
      const void* data;
      std::span<const int64_t> bytes, offsets;
    } mine{send, send_bytes, send_offsets};
    collective(&mine, [&] {
      for (int r = 0; r < g_->size; ++r) {
        const auto& o = *static_cast<const Out*>(g_->published[size_t(r)]);
        if (o.bytes[size_t(rank_)] != recv_bytes[size_t(r)]) fail("all_to_all_v: rank {} sends {} bytes, {} expected", r, o.bytes[size_t(rank_)], recv_bytes[size_t(r)]);
        copy_bytes(static_cast<uint8_t*>(recv) + recv_offsets[size_t(r)],
                   static_cast<const uint8_t*>(o.data) + o.offsets[size_t(rank_)], recv_bytes[size_t(r)]);
      }
    });
  }
  void gather_v(const void* send, int64_t bytes, void* recv, std::span<const int64_t> counts, int root) override {
    collective(send, [&] {
      if (rank_ != root) return;
      auto* out = static_cast<uint8_t*>(recv);
      for (int r = 0; r < g_->size; ++r) {
        copy_bytes(out, g_->published[size_t(r)], counts[size_t(r)]);
        out += counts[size_t(r)];
      }
    });
  }
  void broadcast(void* data, int64_t bytes, int root) override {
    collective(data, [&] {
      if (rank_ != root) copy_bytes(data, g_->published[size_t(root)], bytes);
    });
  }
  void send(const void* data, int64_t bytes, int dst, int tag) override {
    const auto* p = static_cast<const uint8_t*>(data);
    std::lock_guard lock(g_->mutex);
    g_->mail[{rank_, dst, tag}].emplace_back(p, p + (bytes > 0 ? bytes : 0));
    g_->arrived.notify_all();
  }
  void recv(void* data, int64_t bytes, int src, int tag) override {
    std::unique_lock lock(g_->mutex);
    auto& queue = g_->mail[{src, rank_, tag}];
    g_->arrived.wait(lock, [&] { return !queue.empty(); });
    if (int64_t(queue.front().size()) != bytes) fail("recv: {} bytes from rank {}, {} expected", queue.front().size(), src, bytes);
    copy_bytes(data, queue.front().data(), bytes);
    queue.pop_front();
  }
  void barrier() override { g_->sync.arrive_and_wait(); }
  std::unique_ptr<Communicator> split(int color, int key) override {
    g_->keys[size_t(rank_)] = {color, key};
    g_->sync.arrive_and_wait();
    if (rank_ == 0) {  // one rank makes every new group
      std::map<int, std::vector<std::pair<int, int>>> members;  // color -> (key, rank)
      for (int r = 0; r < g_->size; ++r) members[g_->keys[size_t(r)].first].push_back({g_->keys[size_t(r)].second, r});
      for (auto& [c, m] : members) {
        std::sort(m.begin(), m.end());
        auto group = std::make_shared<Group>(int(m.size()));
        for (size_t i = 0; i < m.size(); ++i) {
          g_->children[size_t(m[i].second)] = group;
          g_->counts[size_t(m[i].second)] = int64_t(i);
        }
      }
    }
    g_->sync.arrive_and_wait();
    auto made = std::make_unique<ThreadCommunicator>(g_->children[size_t(rank_)], int(g_->counts[size_t(rank_)]));
    g_->sync.arrive_and_wait();
    return made;
  }

 private:
  template <typename F>
  void collective(const void* mine, F&& take) {
    g_->published[size_t(rank_)] = mine;
    g_->sync.arrive_and_wait();
    take();
    g_->sync.arrive_and_wait();
  }

  std::shared_ptr<Group> g_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_thread_group(int n) {
  auto group = std::make_shared<Group>(n);
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_unique<ThreadCommunicator>(group, r));
  return out;
}

}  // namespace ridge::dist
