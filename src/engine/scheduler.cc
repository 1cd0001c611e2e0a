#include "engine/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ridge {

Scheduler::Scheduler(const SchedulerConfig& config, KvManager& kv) : config_(config), kv_(kv) {
  if (config.max_batched_tokens <= 0 || config.max_num_seqs <= 0)
    throw std::invalid_argument("Scheduler: max_batched_tokens and max_num_seqs must be positive");
}

void Scheduler::add(NewRequest request) {
  if (request.prompt.empty()) throw std::invalid_argument("Scheduler: empty prompt");
  if (requests_.contains(request.id)) throw std::invalid_argument("Scheduler: duplicate request id " + std::to_string(request.id));
  // The last sampled token is never computed, so prompt + max_new - 1 positions need slots.
  const int64_t positions = static_cast<int64_t>(request.prompt.size()) + std::max<int64_t>(request.max_new_tokens, 1) - 1;
  const int64_t blocks = (positions + kv_.block_size() - 1) / kv_.block_size();
  if (blocks > kv_.n_blocks())
    throw std::invalid_argument("Scheduler: request " + std::to_string(request.id) + " needs " + std::to_string(blocks) +
                                " KV blocks, the pool has " + std::to_string(kv_.n_blocks()));
  Request r;
  r.n_prompt = static_cast<int64_t>(request.prompt.size());
  r.tokens = std::move(request.prompt);
  r.max_new_tokens = request.max_new_tokens;
  r.priority = request.priority;
  r.after_prefill_of = request.after_prefill_of;
  r.prefill_only = request.prefill_only;
  r.prompt_logits = request.prompt_logits;
  r.logits_from = std::max<int64_t>(1, request.logits_from);
  r.cache_salt = request.cache_salt;
  // Another instance computes a prompt with the base model only.
  r.remote_allowed = config_.remote_prefill_min_tokens > 0 && !request.prefill_only && !request.prompt_logits && r.cache_salt == 0;
  r.tier_allowed = !request.prompt_logits;
  r.arrival = next_arrival_++;
  waiting_.emplace(wait_key(r), request.id);
  requests_.emplace(request.id, std::move(r));
}

void Scheduler::abort(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (it->second.running) {
    running_.erase(std::find(running_.begin(), running_.end(), id));
  } else {
    waiting_.erase(wait_key(it->second));
  }
  if (it->second.awaiting_remote) {
    quarantine(id);
  } else {
    kv_.free(id);
  }
  requests_.erase(it);
}

void Scheduler::quarantine(RequestId id) {
  const SeqId q = next_quarantine_--;
  kv_.fork(id, q);
  kv_.free(id);
  quarantined_[id] = q;
}

std::optional<SeqId> Scheduler::take_quarantine(RequestId id) {
  auto it = quarantined_.find(id);
  if (it == quarantined_.end()) return std::nullopt;
  const SeqId q = it->second;
  quarantined_.erase(it);
  return q;
}

void Scheduler::remote_prefill_done(RequestId id, bool ok, int64_t n_tokens) {
  auto it = requests_.find(id);
  if (it == requests_.end() || !it->second.awaiting_remote) return;
  Request& r = it->second;
  r.awaiting_remote = false;
  const bool tier = r.loading_from_tier;
  r.loading_from_tier = false;
  if (ok) {
    const int64_t until = n_tokens >= 0 ? std::min(r.awaiting_until, r.n_computed + n_tokens) : r.awaiting_until;
    (tier ? tier_tokens_loaded_ : tokens_received_) += until - r.n_computed;
    r.n_computed = until;
    kv_.truncate(id, r.n_computed);  // the slots of blocks that did not arrive
    kv_.cache_full_blocks(id, r.tokens, r.n_computed);
    if (tier) r.n_cached_prompt = std::max(r.n_cached_prompt, std::min(r.n_computed, r.n_prompt));
    return;
  }
  ++(tier ? tier_load_failures_ : remote_prefill_failures_);
  quarantine(id);
  r.n_computed = 0;
  r.running = false;
  running_.erase(std::find(running_.begin(), running_.end(), id));
  waiting_.emplace(wait_key(r), id);
}

bool Scheduler::prefill_complete(RequestId id) const {
  auto it = requests_.find(id);
  return it != requests_.end() && it->second.prefill_only && it->second.n_computed == static_cast<int64_t>(it->second.tokens.size());
}

StepPlan Scheduler::schedule() {
  if (step_in_flight_) throw std::logic_error("Scheduler: schedule() again before on_step_done()");
  StepPlan plan;
  int64_t budget = config_.max_batched_tokens;
  schedule_running(/*decodes=*/true, plan, budget);
  plan_decodes_ = plan.n_tokens > 0;
  if (plan.n_tokens > 0 && config_.prefill_tokens_while_decoding > 0)
    budget = std::min(budget, config_.prefill_tokens_while_decoding);
  if (prefill_cap_ > 0) budget = std::min(budget, prefill_cap_);
  schedule_running(/*decodes=*/false, plan, budget);
  if (plan.preempted.empty()) admit_waiting(plan, budget);  // no admissions while memory is short
  in_flight_ = plan.requests;
  step_in_flight_ = true;
  return plan;
}

void Scheduler::schedule_running(bool decodes, StepPlan& plan, int64_t& budget) {
  const std::vector<RequestId> snapshot = running_;  // preemption edits running_
  for (RequestId id : snapshot) {
    if (budget == 0) return;
    Request& r = requests_.at(id);
    if (!r.running || r.scheduled > 0 || r.awaiting_remote) continue;
    const int64_t lacking = static_cast<int64_t>(r.tokens.size()) - r.n_computed;
    if (lacking == 0 || (lacking == 1 && !r.prefill_only) != decodes) continue;
    if (decodes && schedule_draft(id, plan, budget)) continue;
    int64_t n = std::min(lacking, budget);
    if (!decodes && (n = fit_in_step(plan, r.n_computed, n)) == 0) continue;
    allocate_or_preempt(id, n, plan, budget);
  }
  if (decodes)
    for (auto& [id, r] : requests_) r.draft.clear();
}

bool Scheduler::decoding(RequestId id) const {
  auto it = requests_.find(id);
  return it != requests_.end() && it->second.running && it->second.scheduled == 0 &&
         static_cast<int64_t>(it->second.tokens.size()) - it->second.n_computed == 1;
}

void Scheduler::set_draft(RequestId id, std::vector<int32_t> draft) {
  if (!decoding(id)) throw std::logic_error("Scheduler: a draft for request " + std::to_string(id) + " that does not decode");
  requests_.at(id).draft = std::move(draft);
}

// A decode with its draft, when the budget and free blocks hold them all; false to decode plainly.
bool Scheduler::schedule_draft(RequestId id, StepPlan& plan, int64_t& budget) {
  Request& r = requests_.at(id);
  const int64_t n_output = static_cast<int64_t>(r.tokens.size()) - r.n_prompt;
  // Tokens past max_new_tokens are never kept, and the step yields one token beyond the drafts.
  const int64_t room = std::min(budget - 1, r.max_new_tokens - n_output - 1);
  if (room <= 0 || r.draft.empty()) return false;
  if (static_cast<int64_t>(r.draft.size()) > room) r.draft.resize(static_cast<size_t>(room));
  const auto n_draft = static_cast<int64_t>(r.draft.size());
  KvManager::Allocation alloc = kv_.allocate_for(id, 1 + n_draft);
  if (!alloc.ok) return false;
  r.draft_in_flight = std::move(r.draft);
  add_to_plan(id, 1 + n_draft, std::move(alloc.copies), plan, budget, n_draft);
  return true;
}

void Scheduler::admit_waiting(StepPlan& plan, int64_t& budget) {
  for (auto it = waiting_.begin();
       it != waiting_.end() && budget > 0 && static_cast<int64_t>(running_.size()) < running_cap();) {
    const RequestId id = it->second;
    Request& r = requests_.at(id);
    if (held_back(r)) {
      ++it;
      continue;
    }
    // The cache matches at most all but the last token it is given: position logits_from - 1 is computed.
    const std::span<const int32_t> reusable = std::span<const int32_t>(r.tokens).first(
        r.prompt_logits ? size_t(std::min<int64_t>(r.logits_from, int64_t(r.tokens.size()))) : r.tokens.size());
    r.n_computed = kv_.match_prefix(id, reusable, r.cache_salt);
    // Blocks filled elsewhere while other requests compute: a tier below the pool holds the next
    // full blocks, or another instance computes every position but the last prompt token.
    int64_t n_elsewhere = 0;
    bool from_tier = false;
    if (config_.tier_holds && r.tier_allowed && !r.prefill_only) {
      n_elsewhere = kv_.lower_tier_blocks(id, r.tokens, config_.tier_holds) * kv_.block_size();
      from_tier = n_elsewhere > 0;
    }
    if (!from_tier && r.remote_allowed && r.n_prompt - 1 - r.n_computed >= config_.remote_prefill_min_tokens)
      n_elsewhere = r.n_prompt - 1 - r.n_computed;
    if (n_elsewhere > 0) {
      if (!admit_awaiting(id, n_elsewhere, from_tier, plan)) return;
      it = waiting_.erase(it);
      continue;
    }
    int64_t n = std::min(static_cast<int64_t>(r.tokens.size()) - r.n_computed, budget);
    const bool room = decode_room_for(r);
    if (!room) ++slo_held_admissions_;
    if (!room || (n = fit_in_step(plan, r.n_computed, n)) == 0) {  // wait for the decodes to shrink
      kv_.free(id);
      r.n_computed = 0;
      return;
    }
    KvManager::Allocation alloc = kv_.allocate_for(id, n);
    if (!alloc.ok) {  // wait for running requests to finish; never preempt to admit
      kv_.free(id);
      r.n_computed = 0;
      return;
    }
    it = waiting_.erase(it);
    if (r.n_cached_prompt < 0) r.n_cached_prompt = std::min(r.n_computed, r.n_prompt);
    r.running = true;
    running_.push_back(id);
    add_to_plan(id, n, std::move(alloc.copies), plan, budget);
  }
}

int32_t Scheduler::running_cap() const {
  int32_t cap = config_.max_num_seqs;
  if (config_.governor && config_.governor->max_running() > 0) cap = std::min(cap, config_.governor->max_running());
  return cap;
}

int64_t Scheduler::fit_in_step(const StepPlan& plan, int64_t first_position, int64_t n) {
  const StepGovernor* g = config_.governor;
  if (!g || !plan_decodes_ || n <= 0 || g->step_bound_seconds() <= 0) return n;
  loads_.clear();
  for (const ScheduledRequest& s : plan.requests)
    loads_.push_back({s.first_position, s.n_tokens, s.samples ? 1 + s.n_draft : 0});
  loads_.push_back({first_position, n, 1});
  const double bound = g->step_bound_seconds();
  if (g->predict_seconds(loads_) <= bound) return n;
  int64_t lo = 0, hi = n;  // the largest fitting count is in [lo, hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    loads_.back().n_new = mid;
    (g->predict_seconds(loads_) <= bound ? lo : hi) = mid;
  }
  slo_held_tokens_ += n - lo;
  return lo;
}

bool Scheduler::decode_room_for(const Request& r) const {
  const StepGovernor* g = config_.governor;
  if (!g || running_.empty() || g->decode_bound_seconds() <= 0) return true;
  std::vector<RunLoad> next;  // every running request's next decode, and this one's
  next.reserve(running_.size() + 1);
  for (RequestId x : running_) next.push_back({static_cast<int64_t>(requests_.at(x).tokens.size()), 1, 1});
  next.push_back({static_cast<int64_t>(r.tokens.size()), 1, 1});
  return g->predict_seconds(next) <= g->decode_bound_seconds();
}

bool Scheduler::admit_awaiting(RequestId id, int64_t n_tokens, bool from_tier, StepPlan& plan) {
  Request& r = requests_.at(id);
  KvManager::Allocation alloc = kv_.allocate_for(id, n_tokens);
  if (!alloc.ok) {  // wait for running requests to finish, as any admission
    kv_.free(id);
    r.n_computed = 0;
    return false;
  }
  if (r.n_cached_prompt < 0) r.n_cached_prompt = r.n_computed;  // a tier load adds what it brings
  (from_tier ? r.tier_allowed : r.remote_allowed) = false;
  r.awaiting_remote = true;
  r.loading_from_tier = from_tier;
  r.awaiting_until = r.n_computed + n_tokens;
  r.running = true;
  running_.push_back(id);
  ++(from_tier ? tier_loads_ : remote_prefills_);
  (from_tier ? plan.tier_loads : plan.remote_prefills).push_back({id, r.n_computed, n_tokens});
  return true;
}

bool Scheduler::held_back(const Request& r) const {
  auto it = requests_.find(r.after_prefill_of);
  return it != requests_.end() && it->second.n_computed < it->second.n_prompt;
}

bool Scheduler::allocate_or_preempt(RequestId id, int64_t n, StepPlan& plan, int64_t& budget) {
  for (;;) {
    KvManager::Allocation alloc = kv_.allocate_for(id, n);
    if (alloc.ok) {
      add_to_plan(id, n, std::move(alloc.copies), plan, budget);
      return true;
    }
    // The victim: lowest priority (when on), then the newest arrival; never one whose blocks a
    // transfer uses (a request that needs blocks for its own transfer waits for them instead).
    std::vector<RequestId> candidates;
    for (RequestId x : running_)
      if (x == id || !requests_.at(x).pinned()) candidates.push_back(x);
    RequestId victim = *std::max_element(candidates.begin(), candidates.end(), [&](RequestId a, RequestId b) {
      return wait_key(requests_.at(a)) < wait_key(requests_.at(b));
    });
    if (victim == id && requests_.at(id).pinned()) return false;
    preempt(victim, plan, budget);
    if (victim == id) return false;
  }
}

void Scheduler::preempt(RequestId id, StepPlan& plan, int64_t& budget) {
  Request& r = requests_.at(id);
  if (r.scheduled > 0) {  // already in this step: take it out again
    auto it = std::find_if(plan.requests.begin(), plan.requests.end(), [&](const ScheduledRequest& s) { return s.id == id; });
    budget += it->n_tokens;
    plan.n_tokens -= it->n_tokens;
    plan.requests.erase(it);
    r.scheduled = 0;
  }
  kv_.free(id);
  r.draft_in_flight.clear();
  r.n_computed = 0;  // recomputed later, from the prefix cache where its blocks survive
  r.running = false;
  running_.erase(std::find(running_.begin(), running_.end(), id));
  waiting_.emplace(wait_key(r), id);
  plan.preempted.push_back(id);
  ++preemptions_;
}

void Scheduler::add_to_plan(RequestId id, int64_t n, std::vector<BlockCopy> copies, StepPlan& plan, int64_t& budget,
                            int64_t n_draft) {
  Request& r = requests_.at(id);
  r.scheduled = n;
  budget -= n;
  plan.n_tokens += n;
  const bool samples = !r.prefill_only && r.n_computed + n - n_draft == static_cast<int64_t>(r.tokens.size());
  plan.requests.push_back(ScheduledRequest{id, r.n_computed, n, samples, n_draft, std::move(copies)});
}

std::vector<FinishedRequest> Scheduler::on_step_done(std::span<const SampledToken> sampled) {
  if (!step_in_flight_) throw std::logic_error("Scheduler: on_step_done() without a step");
  step_in_flight_ = false;
  for (const ScheduledRequest& s : in_flight_) {
    auto it = requests_.find(s.id);
    if (it == requests_.end() || it->second.scheduled == 0) continue;  // aborted meanwhile
    Request& r = it->second;
    const bool is_decode = s.n_tokens - s.n_draft == 1 && s.first_position >= r.n_prompt && s.samples;
    (is_decode ? tokens_decoded_ : tokens_prefilled_) += s.n_tokens;
    r.n_computed += s.n_tokens - s.n_draft;  // drafts count once accepted, below
    r.scheduled = 0;
    kv_.cache_full_blocks(s.id, r.tokens, r.n_computed);
  }
  std::vector<FinishedRequest> finished;
  for (const SampledToken& t : sampled) {
    auto it = requests_.find(t.id);
    if (it == requests_.end()) continue;  // aborted meanwhile
    Request& r = it->second;
    if (!r.running || r.n_computed != static_cast<int64_t>(r.tokens.size()))
      throw std::logic_error("Scheduler: a token for request " + std::to_string(t.id) + " that did not sample");
    const ScheduledRequest* run = nullptr;
    for (const ScheduledRequest& x : in_flight_)
      if (x.id == t.id) run = &x;
    const int64_t n_draft = run ? run->n_draft : 0;
    if (t.accepted_drafts > n_draft) throw std::logic_error("Scheduler: more drafts accepted than were run");
    r.tokens.insert(r.tokens.end(), r.draft_in_flight.begin(), r.draft_in_flight.begin() + t.accepted_drafts);
    r.n_computed += t.accepted_drafts;
    if (n_draft > 0) {
      kv_.truncate(t.id, r.n_computed);  // the rejected drafts' slots
      kv_.cache_full_blocks(t.id, r.tokens, r.n_computed);
    }
    r.draft_in_flight.clear();
    r.tokens.push_back(t.token);
    r.tokens.insert(r.tokens.end(), t.forced.begin(), t.forced.end());
    const int64_t n_output = static_cast<int64_t>(r.tokens.size()) - r.n_prompt;
    if (t.finished || n_output >= r.max_new_tokens) {
      finished.push_back({t.id, std::vector<int32_t>(r.tokens.begin() + r.n_prompt, r.tokens.end())});
      retire(t.id);
    }
  }
  in_flight_.clear();
  return finished;
}

void Scheduler::retire(RequestId id) {
  running_.erase(std::find(running_.begin(), running_.end(), id));
  kv_.free(id);
  requests_.erase(id);
}

SchedulerCounters Scheduler::counters() const {
  SchedulerCounters c;
  c.running = static_cast<int64_t>(running_.size());
  c.waiting = static_cast<int64_t>(waiting_.size());
  c.blocks_used = kv_.n_used_blocks();
  c.blocks_free = kv_.n_free_blocks();
  c.prefix_query_tokens = kv_.prefix_query_tokens();
  c.prefix_hit_tokens = kv_.prefix_hit_tokens();
  c.preemptions = preemptions_;
  c.evictions = kv_.evictions();
  c.tokens_prefilled = tokens_prefilled_;
  c.tokens_decoded = tokens_decoded_;
  for (RequestId id : running_) {
    const Request& r = requests_.at(id);
    c.awaiting_remote += r.awaiting_remote && !r.loading_from_tier ? 1 : 0;
    c.awaiting_tier += r.loading_from_tier ? 1 : 0;
  }
  c.remote_prefills = remote_prefills_;
  c.remote_prefill_failures = remote_prefill_failures_;
  c.tokens_received = tokens_received_;
  c.tier_loads = tier_loads_;
  c.tier_load_failures = tier_load_failures_;
  c.tier_tokens_loaded = tier_tokens_loaded_;
  c.slo_held_tokens = slo_held_tokens_;
  c.slo_held_admissions = slo_held_admissions_;
  return c;
}

}  // namespace ridge
