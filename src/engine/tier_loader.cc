#include "engine/tier_loader.h"

namespace ridge {

TierLoader::TierLoader(KvTiers& tiers, KvStore& store) : tiers_(tiers), store_(store), thread_([this] { work(); }) {}

TierLoader::~TierLoader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

void TierLoader::load(TierLoadJob job, std::function<void(RequestId, int64_t, int64_t)> done) {
  std::lock_guard lock(mutex_);
  queue_.emplace_back(std::move(job), std::move(done));
  cv_.notify_all();
}

void TierLoader::work() {
  std::vector<uint8_t> payload(static_cast<size_t>(kv_tier_block_bytes(store_)));
  for (;;) {
    std::pair<TierLoadJob, std::function<void(RequestId, int64_t, int64_t)>> item;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    const TierLoadJob& job = item.first;
    int64_t loaded = 0;
    for (size_t i = 0; i < job.blocks.size(); ++i, ++loaded) {
      if (!tiers_.load(job.hashes[i], job.parents[i], job.tokens[i], payload)) break;
      kv_tier_scatter(store_, job.blocks[i], payload);  // the block is reserved for this request alone
    }
    item.second(job.id, loaded, loaded * int64_t(payload.size()));
  }
}

}  // namespace ridge
