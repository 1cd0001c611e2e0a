// The in-process transport: peers are other loopback transports of this process, found by address.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/error.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {
namespace {

class LoopbackTransport;
std::mutex g_registry_mutex;
std::map<std::string, LoopbackTransport*>& registry() {
  static std::map<std::string, LoopbackTransport*> r;
  return r;
}
std::atomic<int64_t> g_next_id{1};

class LoopbackTransport final : public KvTransport {
 public:
  LoopbackTransport() : address_("loopback:" + std::to_string(g_next_id++)) {
    std::lock_guard lock(g_registry_mutex);
    registry()[address_] = this;
  }
  ~LoopbackTransport() override {
    {
      std::lock_guard lock(g_registry_mutex);
      registry().erase(address_);
    }
    for (void* p : regions_) std::free(p);
  }
  std::string_view name() const override { return "loopback"; }
  void* allocate(size_t bytes) override {
    void* p = std::calloc(std::max<size_t>(bytes, 1), 1);
    if (!p) fail("loopback transport: cannot allocate {} bytes", bytes);
    regions_.push_back(p);
    sizes_.push_back(bytes);
    return p;
  }
  std::string address() override { return address_; }
  void put(const std::string& peer, std::vector<Put> puts) override {
    std::lock_guard lock(g_registry_mutex);  // the peer stays alive while we write
    LoopbackTransport* p = find(peer);
    for (const Put& x : puts) {
      if (!p) continue;  // a vanished peer: its notify reports it
      if (x.region < 0 || size_t(x.region) >= p->regions_.size() || x.offset + x.bytes > p->sizes_[size_t(x.region)])
        fail("loopback transport: a put outside the peer's region {}", x.region);
      std::memcpy(static_cast<uint8_t*>(p->regions_[size_t(x.region)]) + x.offset, x.src, x.bytes);
      ++stats_.puts;
      stats_.bytes_put += int64_t(x.bytes);
    }
  }
  void notify(const std::string& peer, std::string note, Done done) override {
    std::function<void(const std::string&)> handler;
    {
      std::lock_guard lock(g_registry_mutex);
      LoopbackTransport* p = find(peer);
      if (!p) {
        done(false, "loopback transport: no peer at " + peer);
        return;
      }
      handler = p->handler_;
      ++p->stats_.notes_received;
    }
    ++stats_.notes_sent;
    if (handler) handler(note);
    done(true, "");
  }
  void on_note(std::function<void(const std::string&)> handler) override { handler_ = std::move(handler); }
  TransportStats stats() const override { return stats_; }

 private:
  static LoopbackTransport* find(const std::string& peer) {
    auto it = registry().find(peer);
    return it == registry().end() ? nullptr : it->second;
  }
  std::string address_;
  std::vector<void*> regions_;
  std::vector<size_t> sizes_;
  std::function<void(const std::string&)> handler_;
  TransportStats stats_;
};

}  // namespace

std::unique_ptr<KvTransport> make_loopback_transport() { return std::make_unique<LoopbackTransport>(); }

}  // namespace ridge::kvx
