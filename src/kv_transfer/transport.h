#pragma once
// The KV transport: one-sided writes into a peer's registered memory, then a note that says they
// have landed (NIXL's shape: register memory once, put, notify). The decode instance allocates its
// KV pool here, so the prefill instance can write K/V straight into the blocks it reserved.
//
// Every call but allocate() returns at once; the work runs in order on the transport's own thread
// (UCX's worker is single-threaded), so a forward pass can hand over layer l and go on to l + 1.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::kvx {

struct TransportStats {
  int64_t puts = 0;        // one per contiguous byte range
  int64_t bytes_put = 0;
  int64_t notes_sent = 0;
  int64_t notes_received = 0;
  double put_seconds = 0;  // the transport's thread busy posting puts (on shared memory, the copies themselves)
};

class KvTransport {
 public:
  virtual ~KvTransport() = default;
  virtual std::string_view name() const = 0;  // "ucx", "loopback"
  // Zeroed, lazily backed memory that peers may write into; region ids count from 0 in the order of
  // these calls. Only before the first address(), put() or notify(). Freed with the transport.
  virtual void* allocate(size_t bytes) = 0;
  // Who this side is and the keys of its regions, as opaque bytes for the control plane.
  virtual std::string address() = 0;

  struct Put {
    const void* src = nullptr;
    int32_t region = 0;   // the peer's region
    uint64_t offset = 0;  // bytes into it
    uint64_t bytes = 0;
  };
  using Done = std::function<void(bool ok, const std::string& error)>;
  virtual void put(const std::string& peer, std::vector<Put> puts) = 0;
  // Once every put queued before it to this peer has landed there, delivers `note` to the peer's
  // note handler; then done(ok, error) runs on the transport's thread.
  virtual void notify(const std::string& peer, std::string note, Done done) = 0;
  // Runs on the transport's thread for each note a peer sends here. Set before address().
  virtual void on_note(std::function<void(const std::string& note)> handler) = 0;
  virtual TransportStats stats() const = 0;
};

// UCX (shared memory inside a host, TCP between hosts); throws Error where ridge was built without it.
std::unique_ptr<KvTransport> make_ucx_transport();
bool ucx_available();
// Inside one process (tests): puts are copies.
std::unique_ptr<KvTransport> make_loopback_transport();

// Base64 for carrying addresses in JSON.
std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text);  // throws Error on bad input

}  // namespace ridge::kvx
