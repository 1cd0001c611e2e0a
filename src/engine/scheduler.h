#pragma once
// Iteration-level continuous batching (vLLM v1's scheduler, in ids and counts). Each request has
// tokens (prompt, then what it sampled) and how many of them have K/V computed; each step gives
// every request min(tokens it lacks, budget left) positions. So a prefill, a prefill chunk, a
// decode, a prefix hit (computed starts above zero) and a recompute after preemption are one path.
//
// Order within a step: running decodes, then running prefills (chunked to the budget, and to a
// smaller one when the step decodes), then new admissions in arrival order (or priority, then arrival). When the KV manager cannot hold a
// request's tokens, the newest running request (lowest priority first, when priorities are on) is
// preempted: its blocks are freed and it waits to be recomputed.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/step_governor.h"
#include "engine/step_plan.h"
#include "kv/kv_manager.h"

namespace ridge {

struct SchedulerConfig {
  int64_t max_batched_tokens = 2048;  // tokens per step, over all requests
  // Prompt tokens per step while some request decodes (0: no separate limit), so a long prompt is
  // prefilled in small chunks and the decodes' inter-token latency stays bounded.
  int64_t prefill_tokens_while_decoding = 0;
  int32_t max_num_seqs = 64;          // running requests at once
  bool priorities = false;            // off: first come, first served
  // Disaggregated decode: a request whose uncached prompt (less its last token) has at least this
  // many tokens waits for another instance to fill its blocks (0: never).
  int64_t remote_prefill_min_tokens = 0;
  // Tiered KV cache: whether a tier below the pool holds a block (kv/kv_tiers). At admission, the
  // full blocks after the pool's prefix hit that it holds are loaded instead of computed.
  KvManager::TierLookup tier_holds;
  // Latency objectives (slo/): prefill chunks shrink and admissions wait so that a step that
  // decodes stays within the governor's bound; null: budgets alone decide. Must outlive the scheduler.
  const StepGovernor* governor = nullptr;
};

struct NewRequest {
  RequestId id = 0;
  std::vector<int32_t> prompt;
  int64_t max_new_tokens = 0;
  int32_t priority = 0;  // smaller goes first (vLLM's convention); ignored without priorities
  // Not admitted while this request is still computing its prompt, so that a sibling with the same
  // prompt (n > 1 samples) finds it in the prefix cache instead of computing it again.
  RequestId after_prefill_of = -1;
  // Disaggregated prefill: compute the prompt's K/V and sample nothing; the request then holds its
  // blocks until the caller aborts it (its transfer is over).
  bool prefill_only = false;
  // The logits of prompt positions from logits_from - 1 on are wanted (prompt log-probabilities of
  // tokens logits_from ..): the prefix cache may supply only positions before that, and no tier or
  // other instance supplies any (their positions come without logits).
  bool prompt_logits = false;
  int64_t logits_from = 1;
  // The prefix cache's hash chain starts here (a LoRA adapter's key): blocks computed under one
  // adapter are never found by another's or the base's requests. 0: the base model.
  uint64_t cache_salt = 0;
};

// The token the runner sampled for a request whose run ended at its last token.
struct SampledToken {
  RequestId id = 0;
  int32_t token = 0;
  bool finished = false;  // end of sequence or a stop string, as the caller decides
  std::vector<int32_t> forced;  // tokens appended after it without sampling (grammar jump-forward)
  int64_t accepted_drafts = 0;  // speculative: the run's first drafts that were kept, before `token`
};

struct FinishedRequest {
  RequestId id = 0;
  std::vector<int32_t> output;  // sampled tokens, in order
};

struct SchedulerCounters {
  int64_t running = 0;
  int64_t waiting = 0;
  int64_t blocks_used = 0;
  int64_t blocks_free = 0;
  int64_t prefix_query_tokens = 0;
  int64_t prefix_hit_tokens = 0;
  int64_t preemptions = 0;
  int64_t evictions = 0;
  int64_t tokens_prefilled = 0;  // prompt tokens and recomputed tokens
  int64_t tokens_decoded = 0;
  int64_t awaiting_remote = 0;        // requests whose K/V another instance is computing
  int64_t remote_prefills = 0;        // started
  int64_t remote_prefill_failures = 0;  // ... that failed: the prompt was computed here after all
  int64_t tokens_received = 0;        // prompt positions whose K/V came from another instance
  int64_t awaiting_tier = 0;          // requests whose blocks are being loaded from a tier
  int64_t tier_loads = 0;             // admissions that loaded blocks from a tier below the pool
  int64_t tier_load_failures = 0;
  int64_t tier_tokens_loaded = 0;
  int64_t slo_held_tokens = 0;      // prompt positions a step left out to keep within the step bound
  int64_t slo_held_admissions = 0;  // steps in which an admission waited for the decode bound
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KvManager& kv);

  // Throws std::invalid_argument when the request could never fit in the KV pool.
  void add(NewRequest request);
  // Drops a request wherever it is and frees its blocks (a cancelled client).
  void abort(RequestId id);

  // The next step. Call on_step_done before the next schedule().
  StepPlan schedule();
  // Prompt tokens the next schedule() may add at most (0: no cap beyond the config's): another
  // engine on the same cores is decoding (engine/step_gate.h).
  void set_prefill_cap(int64_t cap) { prefill_cap_ = cap; }
  // The step ran: advance computed counts, append sampled tokens, retire finished requests.
  std::vector<FinishedRequest> on_step_done(std::span<const SampledToken> sampled);

  // Speculative decoding: tokens proposed for a request that decodes next step (decoding(id)). The
  // next schedule() runs them with its decode token when budget and KV blocks allow (never
  // preempting for them), and drops them after; on_step_done keeps the accepted ones and gives
  // the rejected ones' slots back.
  bool decoding(RequestId id) const;
  void set_draft(RequestId id, std::vector<int32_t> draft);
  std::span<const int32_t> draft_in_flight(RequestId id) const { return requests_.at(id).draft_in_flight; }

  bool has_work() const { return !requests_.empty(); }
  std::span<const int32_t> tokens(RequestId id) const { return requests_.at(id).tokens; }
  int64_t n_computed(RequestId id) const { return requests_.at(id).n_computed; }
  int64_t n_prompt(RequestId id) const { return requests_.at(id).n_prompt; }
  bool wants_prompt_logits(RequestId id) const { return requests_.at(id).prompt_logits; }
  // Prompt tokens the prefix cache supplied at the request's first admission.
  int64_t n_cached_prompt(RequestId id) const { return requests_.at(id).n_cached_prompt; }
  SchedulerCounters counters() const;
  // Disaggregated decode: the K/V of a request in StepPlan::remote_prefills has arrived (ok) or not;
  // without it the request waits to be computed here, its reserved blocks quarantined.
  // n_tokens >= 0: only the first n_tokens of the positions asked for arrived (a partial tier load).
  void remote_prefill_done(RequestId id, bool ok, int64_t n_tokens = -1);
  // Blocks another instance might still write into (a failed, timed-out or cancelled transfer)
  // are held under a sequence id of their own until the caller frees it (KvManager::free) once
  // that transfer can no longer write. Returns that id for the request's transfer, if any.
  std::optional<SeqId> take_quarantine(RequestId id);
  // A prefill-only request whose prompt is computed.
  bool prefill_complete(RequestId id) const;

 private:
  struct Request {
    std::vector<int32_t> tokens;  // prompt, then sampled tokens
    int64_t n_prompt = 0;
    int64_t n_computed = 0;  // leading tokens whose K/V is in the cache
    int64_t max_new_tokens = 0;
    int32_t priority = 0;
    int64_t arrival = 0;
    bool running = false;
    int64_t scheduled = 0;  // tokens in the step in flight
    int64_t n_cached_prompt = -1;  // -1 until first admitted
    RequestId after_prefill_of = -1;
    std::vector<int32_t> draft;            // proposed for the next step only
    std::vector<int32_t> draft_in_flight;  // the drafts the step in flight runs
    bool prefill_only = false;
    bool prompt_logits = false;
    int64_t logits_from = 1;
    bool remote_allowed = false;  // admission may hand its prompt to another instance (once)
    bool tier_allowed = true;     // admission may load blocks from a tier (once: not after a failed load)
    bool loading_from_tier = false;
    bool awaiting_remote = false;  // another instance or a tier fills its blocks up to awaiting_until
    int64_t awaiting_until = 0;
    uint64_t cache_salt = 0;
    // Blocks that a transfer reads or writes must not be freed by a preemption.
    bool pinned() const { return prefill_only || awaiting_remote; }
  };
  void quarantine(RequestId id);
  // Admits a request whose next n_tokens positions are filled elsewhere (a tier, another instance);
  // false when the pool cannot hold them now.
  bool admit_awaiting(RequestId id, int64_t n_tokens, bool from_tier, StepPlan& plan);
  bool held_back(const Request& r) const;
  using WaitKey = std::pair<int64_t, int64_t>;  // (priority or 0, arrival)
  WaitKey wait_key(const Request& r) const { return {config_.priorities ? r.priority : 0, r.arrival}; }

  void schedule_running(bool decodes, StepPlan& plan, int64_t& budget);
  void admit_waiting(StepPlan& plan, int64_t& budget);
  // Allocates slots for n tokens of id, preempting as needed; false if id itself was preempted.
  bool allocate_or_preempt(RequestId id, int64_t n, StepPlan& plan, int64_t& budget);
  void preempt(RequestId id, StepPlan& plan, int64_t& budget);
  void add_to_plan(RequestId id, int64_t n, std::vector<BlockCopy> copies, StepPlan& plan, int64_t& budget,
                   int64_t n_draft = 0);
  bool schedule_draft(RequestId id, StepPlan& plan, int64_t& budget);
  // The governor's bounds: how many of n positions from first_position fit in this step (n when
  // nothing decodes or there is no governor), and whether a new request may start decoding.
  int64_t fit_in_step(const StepPlan& plan, int64_t first_position, int64_t n);
  bool decode_room_for(const Request& r) const;
  int32_t running_cap() const;
  void retire(RequestId id);

  SchedulerConfig config_;
  KvManager& kv_;
  std::unordered_map<RequestId, Request> requests_;
  std::vector<RequestId> running_;           // in admission order
  std::map<WaitKey, RequestId> waiting_;     // served from the smallest key
  std::vector<ScheduledRequest> in_flight_;  // the last plan, until on_step_done
  bool step_in_flight_ = false;
  int64_t next_arrival_ = 0;
  int64_t preemptions_ = 0;
  int64_t tokens_prefilled_ = 0;
  int64_t tokens_decoded_ = 0;
  int64_t remote_prefills_ = 0, remote_prefill_failures_ = 0, tokens_received_ = 0;
  int64_t tier_loads_ = 0, tier_load_failures_ = 0, tier_tokens_loaded_ = 0;
  int64_t slo_held_tokens_ = 0, slo_held_admissions_ = 0;
  bool plan_decodes_ = false;       // the step being planned runs a decode
  int64_t prefill_cap_ = 0;
  std::vector<RunLoad> loads_;      // scratch: the step being planned, as the governor sees it
  std::unordered_map<RequestId, SeqId> quarantined_;
  SeqId next_quarantine_ = -1;  // quarantine ids are negative: no request has one
};

}  // namespace ridge
