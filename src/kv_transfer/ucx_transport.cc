// KvTransport on UCX's UCP layer: memory mapped by UCP (shared memory that a peer on the same host
// maps and writes with a plain copy; over TCP the target's worker applies the writes), puts with
// ucp_put_nbx, ucp_ep_flush_nbx for remote completion, an active message as the note.
// One thread owns the worker; the others queue commands and wake it through an eventfd.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include "core/error.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {
namespace {

constexpr uint16_t kNoteId = 17;
constexpr char kMagic[] = "RKX1";

void check(ucs_status_t s, const char* what) {
  if (s != UCS_OK) fail("UCX: {} failed: {}", what, ucs_status_string(s));
}

// The same machine and network namespace: shared memory reaches the peer, and UCX may skip the
// peer-failure bookkeeping (which turns its shared-memory transports off).
std::string host_identity() {
  std::string boot, ns;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  char buf[256] = {};
  const ssize_t n = readlink("/proc/self/ns/net", buf, sizeof buf - 1);
  if (n > 0) ns.assign(buf, size_t(n));
  return boot + "/" + ns;
}

void append_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
void append_blob(std::string& s, const void* p, size_t n) {
  append_u64(s, n);
  s.append(static_cast<const char*>(p), n);
}

struct Reader {
  std::string_view s;
  size_t at = 0;
  uint64_t u64() {
    if (at + 8 > s.size()) fail("UCX transport: a truncated peer address");
    uint64_t v;
    std::memcpy(&v, s.data() + at, 8);
    at += 8;
    return v;
  }
  std::string_view blob() {
    const uint64_t n = u64();
    if (n > s.size() - at) fail("UCX transport: a truncated peer address");
    std::string_view b = s.substr(at, n);
    at += n;
    return b;
  }
};

class UcxTransport final : public KvTransport {
 public:
  UcxTransport() : host_(host_identity()) {
    ucp_config_t* config = nullptr;
    check(ucp_config_read(nullptr, nullptr, &config), "reading the configuration");
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    const ucs_status_t s = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    check(s, "ucp_init");
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    check(ucp_worker_create(context_, &wp, &worker_), "ucp_worker_create");
    check(ucp_worker_get_efd(worker_, &worker_fd_), "ucp_worker_get_efd");
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) fail("UCX transport: eventfd: {}", std::strerror(errno));
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = kNoteId;
    hp.cb = &UcxTransport::on_am;
    hp.arg = this;
    check(ucp_worker_set_am_recv_handler(worker_, &hp), "registering the note handler");
  }

  ~UcxTransport() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake();
    if (thread_.joinable()) thread_.join();
    for (auto& [address, peer] : peers_) close_peer(peer);
    for (ucp_mem_h m : mems_) ucp_mem_unmap(context_, m);
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    close(wake_fd_);
  }

  std::string_view name() const override { return "ucx"; }

  void* allocate(size_t bytes) override {
    if (started_) fail("UCX transport: memory must be allocated before the transport starts");
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address = nullptr;
    mp.length = std::max<size_t>(bytes, 64);
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucp_mem_h mem = nullptr;
    check(ucp_mem_map(context_, &mp, &mem), "ucp_mem_map");
    ucp_mem_attr_t attr{};
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    check(ucp_mem_query(mem, &attr), "ucp_mem_query");
    // Zeroed: UCX tries shared memory and mmap before its last resort, the heap.
    mems_.push_back(mem);
    regions_.push_back({attr.address, bytes});
    return attr.address;
  }

  std::string address() override {
    if (address_.empty()) {
      std::string a(kMagic);
      append_blob(a, host_.data(), host_.size());
      ucp_address_t* worker_address = nullptr;
      size_t length = 0;
      check(ucp_worker_get_address(worker_, &worker_address, &length), "ucp_worker_get_address");
      append_blob(a, worker_address, length);
      ucp_worker_release_address(worker_, worker_address);
      append_u64(a, regions_.size());
      for (size_t i = 0; i < regions_.size(); ++i) {
        void* packed = nullptr;
        size_t packed_size = 0;
        check(ucp_rkey_pack(context_, mems_[i], &packed, &packed_size), "ucp_rkey_pack");
        append_u64(a, reinterpret_cast<uint64_t>(regions_[i].base));
        append_u64(a, regions_[i].bytes);
        append_blob(a, packed, packed_size);
        ucp_rkey_buffer_release(packed);
      }
      address_ = std::move(a);
    }
    start();
    return address_;
  }

  void put(const std::string& peer, std::vector<Put> puts) override { enqueue(PutCommand{peer, std::move(puts)}); }
  void notify(const std::string& peer, std::string note, Done done) override {
    enqueue(NotifyCommand{peer, std::move(note), std::move(done)});
  }
  void on_note(std::function<void(const std::string&)> handler) override {
    std::lock_guard lock(mutex_);
    handler_ = std::move(handler);
  }
  TransportStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct Region {
    void* base;
    size_t bytes;
  };
  struct Peer {
    ucp_ep_h ep = nullptr;
    std::vector<ucp_rkey_h> rkeys;
    std::vector<uint64_t> bases, sizes;
    std::string error;  // non-empty: the peer is unreachable
  };
  struct PutCommand {
    std::string peer;
    std::vector<Put> puts;
  };
  struct NotifyCommand {
    std::string peer;
    std::string note;
    Done done;
  };
  using Command = std::variant<PutCommand, NotifyCommand>;
  struct Pending {
    void* request;
    std::function<void(ucs_status_t)> then;
  };

  static ucs_status_t on_am(void* arg, const void*, size_t, void* data, size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxTransport*>(arg);
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) return UCS_OK;  // notes are small: never rendezvous
    std::function<void(const std::string&)> handler;
    {
      std::lock_guard lock(self->mutex_);
      ++self->stats_.notes_received;
      handler = self->handler_;
    }
    if (handler) handler(std::string(static_cast<const char*>(data), length));
    return UCS_OK;
  }

  static void on_ep_error(void* arg, ucp_ep_h, ucs_status_t status) {
    auto* peer = static_cast<Peer*>(arg);
    peer->error = std::string("the peer failed: ") + ucs_status_string(status);
  }

  void start() {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
    thread_ = std::thread([this] { loop(); });
  }

  void enqueue(Command c) {
    start();
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(c));
    }
    wake();
  }

  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
  }

  Peer& peer_for(const std::string& address) {
    auto it = peers_.find(address);
    if (it != peers_.end()) return it->second;
    Peer& p = peers_[address];
    try {
      Reader r{address};
      if (address.compare(0, 4, kMagic) != 0) fail("UCX transport: not a UCX peer address");
      r.at = 4;
      const std::string_view host = r.blob();
      const std::string_view worker_address = r.blob();
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.address = reinterpret_cast<const ucp_address_t*>(worker_address.data());
      ep.err_mode = host == host_ ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler.cb = &UcxTransport::on_ep_error;
      ep.err_handler.arg = &p;
      check(ucp_ep_create(worker_, &ep, &p.ep), "ucp_ep_create");
      const uint64_t n_regions = r.u64();
      if (n_regions > 64) fail("UCX transport: a peer address with {} regions", n_regions);
      for (uint64_t i = 0; i < n_regions; ++i) {
        p.bases.push_back(r.u64());
        p.sizes.push_back(r.u64());
        const std::string key(r.blob());
        ucp_rkey_h rkey = nullptr;
        check(ucp_ep_rkey_unpack(p.ep, key.data(), &rkey), "ucp_ep_rkey_unpack");
        p.rkeys.push_back(rkey);
      }
    } catch (const std::exception& e) {
      p.error = e.what();
    }
    return p;
  }

  void close_peer(Peer& p) {
    for (ucp_rkey_h k : p.rkeys) ucp_rkey_destroy(k);
    p.rkeys.clear();
    if (!p.ep) return;
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    void* req = ucp_ep_close_nbx(p.ep, &rp);
    if (UCS_PTR_IS_PTR(req)) {
      while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(worker_);
      ucp_request_free(req);
    }
    p.ep = nullptr;
  }

  void track(void* req, std::function<void(ucs_status_t)> then) {
    if (req == nullptr) return then(UCS_OK);
    if (UCS_PTR_IS_ERR(req)) return then(UCS_PTR_STATUS(req));
    pending_.push_back({req, std::move(then)});
  }

  void run(PutCommand& c) {
    const auto start = std::chrono::steady_clock::now();
    Peer& p = peer_for(c.peer);
    struct Timer {  // every return below counts
      UcxTransport* self;
      std::chrono::steady_clock::time_point start;
      ~Timer() {
        std::lock_guard lock(self->mutex_);
        self->stats_.put_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    } timer{this, start};
    for (const Put& x : c.puts) {
      if (!p.error.empty()) return;
      if (x.region < 0 || size_t(x.region) >= p.rkeys.size() || x.offset + x.bytes > p.sizes[size_t(x.region)]) {
        p.error = fmt::format("a put outside the peer's region {}", x.region);
        return;
      }
      ucp_request_param_t rp{};
      void* req = ucp_put_nbx(p.ep, x.src, x.bytes, p.bases[size_t(x.region)] + x.offset, p.rkeys[size_t(x.region)], &rp);
      {
        std::lock_guard lock(mutex_);
        ++stats_.puts;
        stats_.bytes_put += int64_t(x.bytes);
      }
      track(req, [&p](ucs_status_t s) {
        if (s != UCS_OK && p.error.empty()) p.error = std::string("a put failed: ") + ucs_status_string(s);
      });
    }
  }

  void run(NotifyCommand& c) {
    Peer& p = peer_for(c.peer);
    auto fail_with = [](const Done& done, const std::string& error) { done(false, "UCX transport: " + error); };
    if (!p.error.empty()) return fail_with(c.done, p.error);
    ucp_request_param_t rp{};
    auto note = std::make_shared<std::string>(std::move(c.note));
    Done done = std::move(c.done);
    track(ucp_ep_flush_nbx(p.ep, &rp), [this, &p, note, done, fail_with](ucs_status_t s) {
      if (s != UCS_OK && p.error.empty()) p.error = std::string("flush failed: ") + ucs_status_string(s);
      if (!p.error.empty()) return fail_with(done, p.error);
      ucp_request_param_t ap{};
      track(ucp_am_send_nbx(p.ep, kNoteId, nullptr, 0, note->data(), note->size(), &ap), [this, &p, note, done, fail_with](ucs_status_t s2) {
        if (s2 != UCS_OK) return fail_with(done, std::string("the note failed: ") + ucs_status_string(s2));
        if (!p.error.empty()) return fail_with(done, p.error);
        {
          std::lock_guard lock(mutex_);
          ++stats_.notes_sent;
        }
        done(true, "");
      });
    });
  }

  void loop() {
    for (;;) {
      std::deque<Command> commands;
      bool stopping;
      {
        std::lock_guard lock(mutex_);
        commands.swap(queue_);
        stopping = stopping_;
      }
      if (stopping && commands.empty() && pending_.empty()) return;
      for (Command& c : commands) std::visit([this](auto& x) { run(x); }, c);
      while (ucp_worker_progress(worker_) != 0) {
      }
      std::vector<Pending> done;
      for (size_t i = 0; i < pending_.size();) {
        if (ucp_request_check_status(pending_[i].request) == UCS_INPROGRESS) {
          ++i;
          continue;
        }
        done.push_back(std::move(pending_[i]));
        pending_.erase(pending_.begin() + ptrdiff_t(i));
      }
      for (Pending& d : done) {
        const ucs_status_t s = ucp_request_check_status(d.request);
        ucp_request_free(d.request);
        d.then(s);
      }
      if (!commands.empty() || !done.empty() || !pending_.empty()) continue;
      if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
      pollfd fds[2] = {{worker_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      poll(fds, 2, 10);
      uint64_t v;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &v, sizeof v);
    }
  }

  std::string host_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int worker_fd_ = -1, wake_fd_ = -1;
  std::vector<ucp_mem_h> mems_;
  std::vector<Region> regions_;
  std::string address_;
  std::map<std::string, Peer> peers_;  // the thread's own (std::map: a Peer never moves)
  std::vector<Pending> pending_;       // the thread's own
  mutable std::mutex mutex_;           // guards what follows
  bool started_ = false, stopping_ = false;
  std::deque<Command> queue_;
  std::function<void(const std::string&)> handler_;
  TransportStats stats_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<KvTransport> make_ucx_transport() { return std::make_unique<UcxTransport>(); }
bool ucx_available() { return true; }

}  // namespace ridge::kvx
