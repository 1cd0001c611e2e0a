// The engine's counters after each step, copied under the lock for readers on other threads.
#include "backend/paged_forward.h"
#include "engine/engine_live.h"
#include "kv/kv_store.h"
#include "model/shard.h"

namespace ridge {

void Engine::publish_stats(double step_seconds, const StepPlan* plan) {
  const SchedulerCounters c = scheduler_->counters();
  EngineStats& s = own_;
  s.running = c.running;
  s.kv_blocks_used = c.blocks_used;
  s.prefix_query_tokens = c.prefix_query_tokens;
  s.prefix_hit_tokens = c.prefix_hit_tokens;
  s.preemptions = c.preemptions;
  s.evictions = c.evictions;
  s.tokens_prefilled = c.tokens_prefilled;
  s.tokens_decoded = c.tokens_decoded;
  s.awaiting_remote = c.awaiting_remote;
  s.remote_prefill_failures = c.remote_prefill_failures;
  s.kv_tokens_received = c.tokens_received;
  s.tier_loads = c.tier_loads;
  s.tier_load_failures = c.tier_load_failures;
  s.tier_tokens_loaded = c.tier_tokens_loaded;
  if (const KvTiers* tiers = config_.kv_tiers.get()) {
    s.kv_tiers = true;
    s.tier = tiers->stats();
  }
  s.kv_blocks_quarantined = 0;
  for (const Quarantined& q : quarantined_) s.kv_blocks_quarantined += int64_t(kv_->block_table(q.seq).size());
  if (plan) {
    ++s.steps;
    s.step_seconds += step_seconds;
    s.last_batch_tokens = plan->n_tokens;
    s.last_batch_seqs = int64_t(plan->requests.size());
  }
  if (const MoeStats* moe = forward_->moe_stats()) {
    s.moe_expert_tokens = moe->per_expert();
    s.moe_layer_imbalance = moe->worst_imbalance();
    if (model_.shard && model_.shard->request.expert_parallel) {
      // Rank 0 counts every token's routing (replicated router; summed over ranks under data-parallel
      // attention), so it has every rank's load.
      s.moe_rank_tokens.clear();
      for (const Slice& experts : model_.shard->experts.parts) {
        uint64_t n = 0;
        for (int64_t e = experts.begin; e < experts.end(); ++e) n += s.moe_expert_tokens[size_t(e)];
        s.moe_rank_tokens.push_back(n);
      }
    }
  }
  std::lock_guard lock(mutex_);
  s.waiting = c.waiting + int64_t(inbox_.size());
  s.slo.ttft_rejected = ttft_rejected_;
  stats_ = s;
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mutex_);
  EngineStats s = stats_;
  s.slo.ttft_rejected = ttft_rejected_;  // refusals happen between steps
  if (const KvTiers* tiers = config_.kv_tiers.get()) {  // the tiers change between steps too (the writer, a restart's scan)
    s.kv_tiers = true;
    s.tier = tiers->stats();
  }
  return s;
}

}  // namespace ridge
