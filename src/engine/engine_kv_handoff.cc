// The engine's side of K/V that comes from elsewhere or goes elsewhere: a prefill-only request's
// sink released, a remote prefill's or a tier load's result, quarantined blocks, offloading evicted
// blocks into the tiers (engine/kv_handoff.h, kv/kv_tiers.h).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "backend/paged_forward.h"
#include "engine/engine.h"
#include "engine/engine_live.h"
#include "engine/tier_loader.h"

namespace ridge {

using Clock = std::chrono::steady_clock;

void Engine::finish_handoffs(std::vector<Handoff>& handoffs, Events& events) {
  for (Handoff& h : handoffs) {
    if (h.released) {  // a prefill-only request's transfer is over: free its blocks, end it
      auto it = live_.find(h.id);
      if (it == live_.end() || std::find(finished_.begin(), finished_.end(), h.id) != finished_.end()) continue;
      TokenEvent e = event_for(h.id, *it->second);
      scheduler_->abort(h.id);
      e.finish = h.ok ? FinishReason::Stop : FinishReason::Abort;
      ++(h.ok ? own_.kv_transfers_sent : own_.kv_send_failures);
      const KvSink::Timing t = it->second->options.kv_sink->timing();
      own_.kv_bytes_sent += t.bytes;
      if (h.ok && t.bytes > 0) {
        own_.kv_sent_bytes_histogram.add(kKvBytesBuckets, double(t.bytes));
        own_.kv_send_exposed_histogram.add(kKvTransferBuckets, t.exposed_seconds);
        if (t.stream_seconds > 0) own_.kv_send_bandwidth_histogram.add(kKvBandwidthBuckets, double(t.bytes) / t.stream_seconds);
      }
      ++(h.ok ? own_.requests_finished_stop : own_.requests_aborted);
      events.emplace_back(&it->second->on_event, std::move(e));
      finished_.push_back(h.id);
      continue;
    }
    const RemotePrefillResult& r = h.result;
    if (h.tier) {
      own_.tier_bytes_loaded += r.bytes;
    } else if (r.ok) {
      ++own_.remote_prefills;
      own_.kv_bytes_received += r.bytes;
      own_.kv_received_bytes_histogram.add(kKvBytesBuckets, double(r.bytes));
      own_.kv_transfer_seconds += r.seconds;
      const auto bucket = std::lower_bound(kKvTransferBuckets.begin(), kKvTransferBuckets.end(), r.seconds) - kKvTransferBuckets.begin();
      ++own_.kv_transfer_histogram[size_t(bucket)];
    } else if (live_.contains(h.id) && std::find(finished_.begin(), finished_.end(), h.id) == finished_.end()) {
      std::fprintf(stderr, "remote prefill of request %lld failed, computing it here: %s\n", (long long)h.id, r.error.c_str());
    }
    scheduler_->remote_prefill_done(h.id, r.ok, h.tier ? r.tokens : -1);
    // The transfer is over; a peer that timed out might still be writing, so wait a little longer.
    if (std::optional<SeqId> q = scheduler_->take_quarantine(h.id))
      quarantined_.push_back({*q, Clock::now() + std::chrono::seconds(h.tier ? 0 : 2)});
  }
}

void Engine::free_expired_quarantines() {
  const auto now = Clock::now();
  std::erase_if(quarantined_, [&](const Quarantined& q) {
    if (q.until > now) return false;
    kv_->free(q.seq);
    return true;
  });
}

void Engine::offload_evicted() {
  if (!config_.kv_tiers) return;
  std::vector<KvManager::EvictedBlock> evicted = kv_->take_evicted();
  if (evicted.empty()) return;
  const KvStore& store = *forward_->host_kv_store();
  std::vector<uint8_t> payload(size_t(kv_tier_block_bytes(store)));
  for (const KvManager::EvictedBlock& e : evicted) {
    kv_tier_gather(store, e.block, payload);
    config_.kv_tiers->put(e.hash, e.parent, e.tokens, payload);
  }
  own_.tier_blocks_offloaded += int64_t(evicted.size());
}

void Engine::start_tier_loads(const StepPlan& plan) {
  const int64_t bs = config_.block_size;
  for (const RemotePrefillStart& s : plan.tier_loads) {
    TierLoadJob job;
    job.id = s.id;
    const std::span<const int32_t> tokens = scheduler_->tokens(s.id);
    const std::span<const BlockId> table = kv_->block_table(s.id);
    uint64_t parent = kv_->prefix_hash(s.id);
    for (int64_t b = s.first_position / bs; b < (s.first_position + s.n_tokens) / bs; ++b) {
      const std::span<const int32_t> block_tokens = tokens.subspan(size_t(b * bs), size_t(bs));
      const uint64_t hash = PrefixCache::chain_hash(parent, block_tokens);
      job.blocks.push_back(table[size_t(b)]);
      job.hashes.push_back(hash);
      job.parents.push_back(parent);
      job.tokens.emplace_back(block_tokens.begin(), block_tokens.end());
      parent = hash;
    }
    const int64_t n_blocks = int64_t(job.blocks.size());
    tier_loader_->load(std::move(job), [this, n_blocks, bs](RequestId id, int64_t blocks, int64_t bytes) {
      std::lock_guard lock(mutex_);
      Handoff h;
      h.id = id;
      h.ok = blocks > 0;
      h.tier = true;
      h.result.id = id;
      h.result.ok = blocks > 0;
      h.result.bytes = bytes;
      h.result.tokens = blocks * bs;  // a block the tiers lost since admission ends the load there
      if (blocks < n_blocks) h.result.error = "partial";
      handoffs_.push_back(std::move(h));
      wake_.notify_one();
    });
  }
}

void Engine::start_remote_prefills(const StepPlan& plan) {
  for (const RemotePrefillStart& s : plan.remote_prefills) {
    RemotePrefillJob job;
    job.id = s.id;
    const std::span<const int32_t> tokens = scheduler_->tokens(s.id);
    job.tokens.assign(tokens.begin(), tokens.begin() + s.first_position + s.n_tokens);
    job.first_position = s.first_position;
    const std::span<const BlockId> table = kv_->block_table(s.id);
    job.blocks.assign(table.begin() + s.first_position / config_.block_size, table.end());
    config_.remote_prefill->start(std::move(job), [this](RemotePrefillResult result) {
      std::lock_guard lock(mutex_);
      Handoff h;
      h.id = result.id;
      h.ok = result.ok;
      h.result = std::move(result);
      handoffs_.push_back(std::move(h));
      wake_.notify_one();
    });
  }
}

}  // namespace ridge
