#pragma once
// Tiered KV cache, the engine's side: blocks of a prefix found in a tier below the pool (RAM, disk:
// kv/kv_tiers) are copied into the blocks the scheduler reserved, on a thread of their own, while
// the engine steps other requests; a block that fails to load (a corrupt file) fails the job, and
// the request computes its prompt instead.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/step_plan.h"
#include "kv/kv_store.h"
#include "kv/kv_tiers.h"

namespace ridge {

struct TierLoadJob {
  RequestId id = 0;
  std::vector<BlockId> blocks;             // the pool's blocks to fill, in order
  std::vector<uint64_t> hashes, parents;   // each block's chained hash and its parent's
  std::vector<std::vector<int32_t>> tokens;
};

class TierLoader {
 public:
  TierLoader(KvTiers& tiers, KvStore& store);
  ~TierLoader();  // finishes the job in progress; drops the queued ones (their done is not called)
  // done(id, blocks, bytes) runs on the loader's thread: the job's first `blocks` blocks are in the
  // pool (it stops at the first block the tiers no longer hold or find corrupt).
  void load(TierLoadJob job, std::function<void(RequestId, int64_t blocks, int64_t bytes)> done);

 private:
  void work();
  KvTiers& tiers_;
  KvStore& store_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<TierLoadJob, std::function<void(RequestId, int64_t, int64_t)>>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ridge
