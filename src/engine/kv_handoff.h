#pragma once
// Disaggregated prefill/decode, as the engine sees it (the transport lives in src/kv_transfer/).
//
// Prefill side: a request with a KvSink computes its prompt and samples nothing; after each layer
// of each step the sink may send what that layer now holds, and once the prompt is computed the
// engine keeps the request's blocks until the sink says the transfer is over.
//
// Decode side: with a RemotePrefill, a new request whose uncached prompt is long enough has blocks
// reserved for all but its last prompt token and waits while another instance fills them; then it
// computes the last prompt token here and decodes. A failed transfer computes the prompt here.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/step_plan.h"
#include "kv/block_pool.h"

namespace ridge {

class KvSink {
 public:
  virtual ~KvSink() = default;
  // The step's K/V of `layer` is in the store: blocks is the request's block table, computed_end
  // the positions that will have K/V once this step ends.
  virtual void on_layer(int64_t layer, std::span<const BlockId> blocks, int64_t computed_end) = 0;
  // Every position is computed and every on_layer call made. released(ok, error) may run on any
  // thread, once the blocks are no longer read.
  virtual void finish(std::function<void(bool ok, const std::string& error)> released) = 0;
  struct Timing {
    int64_t bytes = 0;
    double stream_seconds = 0;   // first put posted .. the last byte landed
    double exposed_seconds = 0;  // the prompt's compute ended .. the last byte landed (not hidden)
  };
  // What the transfer did so far (complete once released has run).
  virtual Timing timing() const = 0;
};

struct RemotePrefillJob {
  RequestId id = 0;
  std::vector<int32_t> tokens;   // the positions to fill: the prompt without its last token
  int64_t first_position = 0;    // positions before it are here already (prefix cache); block-aligned
  std::vector<BlockId> blocks;   // this instance's blocks for positions first_position .. tokens.size() - 1
};

struct RemotePrefillResult {
  RequestId id = 0;
  bool ok = false;
  std::string error;
  int64_t bytes = 0;
  double seconds = 0;  // from start() to the end of the transfer
  int64_t tokens = -1;  // positions filled, when fewer than asked (a tier load); -1: all
};

class RemotePrefill {
 public:
  virtual ~RemotePrefill() = default;
  // Prompts with fewer uncached tokens than this are computed here.
  virtual int64_t min_tokens() const = 0;
  // Returns at once; done(result) runs later on another thread, exactly once (also after cancel).
  virtual void start(RemotePrefillJob job, std::function<void(RemotePrefillResult)> done) = 0;
  virtual void cancel(RequestId id) = 0;
};

}  // namespace ridge
