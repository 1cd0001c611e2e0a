#pragma once
// The prefill side of one transfer: a KvSink that, after each layer of each step, puts the blocks
// that layer has completed into the decode instance's reserved blocks (one put per coalesced run
// per region), and when the prompt is done sends the rest, flushes and notes the transfer's end.
// A block is sent once per layer, when no later step can change it (the prompt's last, partial
// block goes with the last step), so puts never overlap.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/kv_handoff.h"
#include "kv/kv_store.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {

struct SendTarget {
  std::string peer;                 // the decode instance's transport address
  std::string transfer_id;          // echoed in the note
  int64_t n_positions = 0;          // prompt positions with K/V to send (the prompt less its last token)
  int64_t first_block = 0;          // the decode instance holds the blocks before it already
  std::vector<BlockId> dst_blocks;  // its blocks for first_block .. ceil(n_positions / block_size) - 1
  int32_t remote_n_blocks = 0;      // its pool's size: the stride of its layers
};

// What one transfer did, with times in seconds from the sender's creation.
struct SendReport {
  int64_t bytes = 0;
  int64_t puts = 0;
  int64_t descriptors = 0;  // coalesced block runs: puts per layer and region
  int64_t blocks = 0;
  std::vector<double> layer_sent;  // when the last step handed each layer to the transport
  double first_put = -1;           // when the first put was handed to the transport
  double compute_done = 0;         // the prompt's last step ended
  double transfer_done = 0;        // the note was delivered (every byte landed before it)
  bool ok = false;
  std::string error;
};

class KvSender final : public KvSink, public std::enable_shared_from_this<KvSender> {
 public:
  // Throws Error when the target does not fit this store or the peer's pool. Owned by a shared_ptr.
  KvSender(KvTransport& transport, const KvStore& store, SendTarget target);
  void on_layer(int64_t layer, std::span<const BlockId> blocks, int64_t computed_end) override;
  void finish(std::function<void(bool ok, const std::string& error)> released) override;
  Timing timing() const override;
  SendReport report() const;

 private:
  double now() const;
  KvTransport& transport_;
  const KvStore& store_;
  SendTarget target_;
  int64_t n_blocks_ = 0;                // the prompt's blocks
  std::vector<int64_t> sent_;           // per layer: blocks sent so far (from first_block)
  std::vector<BlockId> src_blocks_;     // the request's table, as last seen
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  SendReport report_;
};

// The note a sender delivers: {"transfer_id": ..., "ok": true}.
std::string transfer_note(const std::string& transfer_id);
std::string note_transfer_id(const std::string& note);  // "" when the note is not one

}  // namespace ridge::kvx
