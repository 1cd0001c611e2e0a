#include "kv_events/zmq_publisher.h"

#include <zmq.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ridge::kv_events {

namespace {

constexpr auto kReplayPoll = std::chrono::milliseconds(20);  // how often the thread looks for replay requests
constexpr int kLingerMs = 500;  // at close, how long queued messages may still go out

std::string be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(v >> (8 * (7 - i)));
  return out;
}

uint64_t from_be64(const std::string& bytes) {
  uint64_t v = 0;
  for (char c : bytes) v = (v << 8) | uint8_t(c);
  return v;
}

// vLLM's rule (ZmqEventPublisher._socket_setup): wildcards and local transports are bound.
bool binds(const std::string& endpoint) {
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://");
}

// Multipart send; PUB and ROUTER sockets drop (never block) when a peer's queue is full.
void send_frames(void* socket, std::initializer_list<std::string_view> frames) {
  size_t i = 0;
  for (std::string_view f : frames) {
    const int more = ++i < frames.size() ? ZMQ_SNDMORE : 0;
    zmq_send(socket, f.data(), f.size(), ZMQ_DONTWAIT | more);
  }
}

std::vector<std::string> recv_frames(void* socket) {
  std::vector<std::string> frames;
  int more = 1;
  while (more) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, socket, 0) < 0) {
      zmq_msg_close(&msg);
      break;
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
  }
  return frames;
}

std::string last_endpoint(void* socket) {
  char buf[256] = {};
  size_t size = sizeof(buf);
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, buf, &size) != 0) return {};
  return std::string(buf);
}

class Publisher final : public ZmqPublisher {
 public:
  explicit Publisher(const ZmqPublisherOptions& options) : options_(options), ctx_(zmq_ctx_new()) {
    if (!ctx_) fail("kv events: cannot create a ZeroMQ context: {}", zmq_strerror(errno));
    try {
      open_sockets();
    } catch (...) {
      close_sockets();
      throw;
    }
    thread_ = std::thread([this] { run(); });
  }

  ~Publisher() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    close_sockets();
  }

  void on_blocks_stored(std::optional<uint64_t> parent, std::span<const uint64_t> block_hashes,
                        std::span<const int32_t> token_ids, int32_t block_size) override {
    push(KvEvent{KvEvent::Kind::kStored, {block_hashes.begin(), block_hashes.end()}, parent,
                 {token_ids.begin(), token_ids.end()}, block_size});
  }
  void on_blocks_removed(std::span<const uint64_t> block_hashes) override {
    push(KvEvent{KvEvent::Kind::kRemoved, {block_hashes.begin(), block_hashes.end()}, std::nullopt, {}, 0});
  }
  void on_all_cleared() override { push(KvEvent{KvEvent::Kind::kAllCleared, {}, std::nullopt, {}, 0}); }

  std::string endpoint() const override { return endpoint_; }
  std::string replay_endpoint() const override { return replay_endpoint_; }
  bool bound() const override { return bound_; }
  int64_t published_batches() const override { return published_.load(); }
  int64_t dropped_events() const override { return dropped_.load(); }

 private:
  void open_sockets() {
    pub_ = zmq_socket(ctx_, ZMQ_PUB);
    zmq_setsockopt(pub_, ZMQ_SNDHWM, &options_.hwm, sizeof(options_.hwm));
    zmq_setsockopt(pub_, ZMQ_LINGER, &kLingerMs, sizeof(kLingerMs));
    bound_ = binds(options_.endpoint);
    const int rc = bound_ ? zmq_bind(pub_, options_.endpoint.c_str()) : zmq_connect(pub_, options_.endpoint.c_str());
    if (rc != 0)
      fail("kv events: cannot {} {}: {}", bound_ ? "bind" : "connect to", options_.endpoint, zmq_strerror(errno));
    endpoint_ = bound_ ? last_endpoint(pub_) : options_.endpoint;
    if (options_.replay_endpoint.empty()) return;
    replay_ = zmq_socket(ctx_, ZMQ_ROUTER);
    zmq_setsockopt(replay_, ZMQ_LINGER, &kLingerMs, sizeof(kLingerMs));
    if (zmq_bind(replay_, options_.replay_endpoint.c_str()) != 0)
      fail("kv events: cannot bind the replay endpoint {}: {}", options_.replay_endpoint, zmq_strerror(errno));
    replay_endpoint_ = last_endpoint(replay_);
  }

  void close_sockets() {
    if (pub_) zmq_close(pub_);
    if (replay_) zmq_close(replay_);
    pub_ = replay_ = nullptr;
    if (ctx_) zmq_ctx_term(ctx_);
    ctx_ = nullptr;
  }

  void push(KvEvent&& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (int64_t(queued_.size()) >= options_.max_queued_events) {
        dropped_.fetch_add(1);
        dropped_since_batch_ = true;
        return;
      }
      queued_.push_back(std::move(e));
    }
    cv_.notify_one();
  }

  void run() {
    std::vector<KvEvent> batch;
    for (;;) {
      bool stopping = false;
      bool skip_seq = false;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [&] { return stop_ || !queued_.empty(); };
        if (replay_) cv_.wait_for(lock, kReplayPoll, ready);
        else cv_.wait(lock, ready);
        batch.swap(queued_);
        skip_seq = std::exchange(dropped_since_batch_, false);
        stopping = stop_;
      }
      if (skip_seq) {
        std::fprintf(stderr, "ridge: kv events: the publisher fell behind; %lld events dropped so far\n",
                     static_cast<long long>(dropped_.load()));
        ++next_seq_;  // the lost events' batch: a gap the subscribers can see
      }
      if (!batch.empty()) publish(batch);
      batch.clear();
      if (replay_) serve_replays();
      if (stopping) return;  // the queue was taken after stop_ was seen: nothing is left behind
    }
  }

  void publish(std::span<const KvEvent> events) {
    const double ts = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string payload = encode_event_batch(ts, events, options_.format);
    const uint64_t seq = next_seq_++;
    published_.fetch_add(1);  // before the send: a subscriber that has the batch sees it counted
    send_frames(pub_, {options_.topic, be64(seq), payload});
    if (!replay_ || options_.buffer_steps <= 0) return;
    kept_.emplace_back(seq, std::move(payload));
    if (int64_t(kept_.size()) > options_.buffer_steps) kept_.pop_front();
  }

  // Requests are [identity, "", start seq]; each gets the kept batches from there, then the end mark.
  void serve_replays() {
    static const std::string kEndSeq = be64(~uint64_t{0});  // -1 as a signed 8-byte integer
    for (;;) {
      zmq_pollitem_t item{replay_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 0) <= 0 || !(item.revents & ZMQ_POLLIN)) return;
      const std::vector<std::string> frames = recv_frames(replay_);
      if (frames.size() != 3 || !frames[1].empty() || frames[2].size() != 8) {
        std::fprintf(stderr, "ridge: kv events: ignored a replay request of %zu frames\n", frames.size());
        continue;
      }
      const uint64_t start = from_be64(frames[2]);
      for (const auto& [seq, payload] : kept_)
        if (seq >= start) send_frames(replay_, {frames[0], "", options_.topic, be64(seq), payload});
      send_frames(replay_, {frames[0], "", options_.topic, kEndSeq, ""});
    }
  }

  const ZmqPublisherOptions options_;
  void* ctx_ = nullptr;
  void* pub_ = nullptr;
  void* replay_ = nullptr;
  std::string endpoint_;
  std::string replay_endpoint_;
  bool bound_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<KvEvent> queued_;  // guarded by mu_
  bool dropped_since_batch_ = false;  // guarded by mu_
  bool stop_ = false;                 // guarded by mu_
  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> published_{0};

  // The publisher thread's own.
  uint64_t next_seq_ = 0;
  std::deque<std::pair<uint64_t, std::string>> kept_;  // (seq, payload), for replay
  std::thread thread_;
};

}  // namespace

std::shared_ptr<ZmqPublisher> make_zmq_publisher(const ZmqPublisherOptions& options) {
  return std::make_shared<Publisher>(options);
}

bool zmq_available() { return true; }

}  // namespace ridge::kv_events
