#include "engine/engine.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "backend/paged_forward.h"
#include "core/error.h"
#include "core/log.h"
#include "dist/world.h"
#include "engine/batch_runner.h"
#include "engine/engine_live.h"
#include "engine/grammar_step.h"
#include "engine/stop_strings.h"
#include "engine/tier_loader.h"
#include "slo/slo_governor.h"
#include "kv/kv_store.h"
#include "model/shard.h"
#include "model/kv_shape.h"

namespace ridge {
namespace {

// A LoRA adapter's prefix-cache salt: its id mixed (splitmix64) so it lands far from other chains.
uint64_t lora_cache_salt(const lora::LoraAdapter& a) {
  uint64_t z = a.id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return z == 0 ? 1 : z;
}

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }


// Fills the defaults the caller left at 0 and checks that the KV budget holds one full sequence.
EngineConfig resolve(const Model& model, EngineConfig c, KvMemoryPlan& plan, MemoryBudget& memory) {
  const ModelSpec& s = model.spec;
  if (c.n_ctx <= 0) c.n_ctx = s.n_ctx_train > 0 ? s.n_ctx_train : 4096;
  if (c.block_size <= 0 || c.block_size > 1024) fail("--block-size must be in 1..1024, got {}", c.block_size);
  if (c.max_num_seqs <= 0) fail("--max-num-seqs must be positive, got {}", c.max_num_seqs);
  if (c.max_batched_tokens <= 0) fail("--max-batched-tokens must be positive, got {}", c.max_batched_tokens);
  if (c.prefill_chunk < 0) fail("--prefill-chunk must be 0 or positive, got {}", c.prefill_chunk);
  // Helix: each rank keeps 1/kvp of every block, so the same memory holds kvp times the positions.
  // The default block grows with the group (dist/world.h).
  const int kvp = c.parallel ? c.parallel->sizes.kvp : 1;
  if (c.block_size == dist::default_kv_block_size(1)) c.block_size = dist::default_kv_block_size(kvp);
  if (c.block_size % kvp != 0) fail("--helix {}: --block-size {} must be a multiple of {}", kvp, c.block_size, kvp);
  const KvLayout layout = kv_layout_of(s, c.block_size, 1, c.kv_dtype);
  KvMemoryInputs in{(layout.bytes_per_token_per_layer() + kvp - 1) / kvp, s.n_layer, c.kv_memory_bytes, c.block_size, c.n_ctx};
  memory = measure_memory_budget();
  const int64_t per_token = in.bytes_per_token_per_layer * s.n_layer;
  if (c.kv_memory_bytes <= 0) {
    // Enough for every running sequence at full length, but at most a fifth of the memory there is.
    const int64_t wanted = per_token * c.n_ctx * c.max_num_seqs;
    const int64_t one = per_token * (c.n_ctx + c.block_size);
    in.budget_bytes = c.kv_memory_bytes = std::max(one, std::min(wanted, memory.limit.bytes / 5));
  }
  // Inside a cgroup's limit the host pool must fit beside what is resident (a GPU's pool or a
  // transport's registered memory is sized by its owner).
  if (resolve_device(c.device) == Device::Cpu && !c.kv_allocator) {
    const int64_t min_bytes = per_token * c.block_size * 8;
    if (!memory.fit_pool(c.kv_memory_bytes, min_bytes))
      fail("memory: the limit of {:.0f} MiB ({}) leaves no room for a KV cache: {:.0f} MiB are resident and {:.0f} MiB are kept "
           "free for the steps",
           double(memory.limit.bytes) / double(1 << 20), memory.limit.source, double(memory.resident_at_start) / double(1 << 20),
           double(memory.reserve) / double(1 << 20));
    in.budget_bytes = c.kv_memory_bytes;
  }
  plan = plan_kv_memory(in);
  if (plan.full_context_seqs < 1 && memory.lowered()) {
    memory.context = (int64_t(plan.n_blocks) - 1) * c.block_size;  // a block spare for the sequence's next token
  } else if (plan.full_context_seqs < 1)
    fail("the KV budget of {:.1f} MiB holds {} tokens ({} bytes each), less than one sequence of {} tokens: raise "
         "--kv-memory or lower --ctx-size",
         double(c.kv_memory_bytes) / double(1 << 20), plan.n_tokens, plan.bytes_per_token, c.n_ctx);
  return c;
}

}  // namespace

int64_t weight_bytes_of(const Model& model) {
  std::set<const void*> seen;
  int64_t total = 0;
  for_each_weight(const_cast<ModelWeights&>(model.weights), [&](const WeightRef& w) {
    if (w.present() && seen.insert(w.data).second) total += w.rows * w.row_bytes();
  });
  return total;
}

Engine::Engine(const Model& model, const Tokenizer& tokenizer, const EngineConfig& config)
    : model_(model), tokenizer_(tokenizer) {
  config_ = resolve(model, config, memory_plan_, memory_);
  if (memory_.lowered()) log_warning("{}", memory_.describe());
  kv_ = std::make_unique<KvManager>(KvConfig{memory_plan_.n_blocks, config_.block_size, config_.prefix_caching});
  kv_->set_event_sink(config_.kv_events.get());
  SchedulerConfig sc{config_.max_batched_tokens, config_.prefill_chunk, config_.max_num_seqs, config_.priorities};
  sc.governor = config_.governor.get();
  if (config_.remote_prefill) sc.remote_prefill_min_tokens = std::max<int64_t>(1, config_.remote_prefill->min_tokens());
  if (KvTiers* tiers = config_.kv_tiers.get())
    sc.tier_holds = [tiers](uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) { return tiers->contains(hash, parent, tokens); };
  scheduler_ = std::make_unique<Scheduler>(sc, *kv_);
  PagedForwardConfig fc{config_.device, config_.n_threads, config_.kv_dtype, config_.block_size,
                        memory_plan_.n_blocks, config_.n_ctx, config_.parallel};
  fc.kv_allocator = config_.kv_allocator;
  forward_ = make_paged_forward(model, fc);
  if ((config_.remote_prefill || config_.kv_allocator) && !forward_->host_kv_store())
    fail("disaggregated prefill/decode needs the KV pool in host memory (--device cpu, one process)");
  if (config_.kv_tiers) {
    if (!forward_->host_kv_store() || config_.parallel) fail("the KV offload tiers need the KV pool in host memory (--device cpu, one process)");
    if (config_.kv_tiers->config().block_bytes != kv_tier_block_bytes(*forward_->host_kv_store()))
      fail("the KV offload tiers were made for blocks of {} bytes, this pool's are {}", config_.kv_tiers->config().block_bytes,
           kv_tier_block_bytes(*forward_->host_kv_store()));
    kv_->keep_evictions(true);
    tier_loader_ = std::make_unique<TierLoader>(*config_.kv_tiers, *forward_->host_kv_store());
  }
  runner_ = std::make_unique<BatchRunner>(*forward_);
  runner_->set_adapter_lookup([this](RequestId id) -> const lora::LoraAdapter* {
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second->options.adapter.get();
  });
  if (config_.draft_model) {
    if (config_.draft_model->spec.n_vocab != model.spec.n_vocab)
      fail("the draft model's vocabulary has {} tokens, the model's {}: they must share one", config_.draft_model->spec.n_vocab,
           model.spec.n_vocab);
    // As many token slots as the target's pool: every running request can draft.
    draft_ = std::make_unique<spec::DraftModel>(*config_.draft_model,
                                                PagedForwardConfig{config_.device, config_.n_threads, config_.kv_dtype,
                                                                   config_.block_size, memory_plan_.n_blocks, config_.n_ctx},
                                                config_.draft_vocab_size);
  } else if (config_.speculative == SpeculativeMode::kDraft) {
    fail("--speculative draft needs a draft model (--draft-model FILE)");
  }
  own_.kv_blocks_total = stats_.kv_blocks_total = memory_plan_.n_blocks;
}

Engine::~Engine() { stop(); }

int64_t Engine::weight_bytes() const { return weight_bytes_of(model_); }

const KvStore* Engine::host_kv_store() const { return forward_->host_kv_store(); }

RequestId Engine::submit(RequestOptions options, EventCallback on_event) {
  using Kind = SubmitError::Kind;
  const auto n_prompt = int64_t(options.prompt.size());
  if (n_prompt == 0) throw SubmitError(Kind::BadRequest, "the prompt is empty");
  for (int32_t id : options.prompt)
    if (id < 0 || id >= model_.spec.n_vocab)
      throw SubmitError(Kind::BadRequest, fmt::format("token id {} is outside the vocabulary of {}", id, model_.spec.n_vocab));
  if (n_prompt >= config_.n_ctx)
    throw SubmitError(Kind::ContextExceeded,
                      fmt::format("the prompt has {} tokens; the context holds {} (prompt and output)", n_prompt, config_.n_ctx));
  if (options.max_tokens < 1) throw SubmitError(Kind::BadRequest, fmt::format("max_tokens must be at least 1, got {}", options.max_tokens));
  const int64_t context = memory_.context > 0 ? std::min(memory_.context, config_.n_ctx) : config_.n_ctx;
  if (!options.kv_sink)
    if (std::string why = memory_.refuse(n_prompt); !why.empty()) throw SubmitError(Kind::MemoryLimit, why, 1.0);
  options.max_tokens = int32_t(std::min<int64_t>(options.max_tokens, context - n_prompt));
  try {
    validate(options.sampling);
  } catch (const Error& e) {
    throw SubmitError(Kind::BadRequest, e.what());
  }
  if (options.kv_sink) {
    if (!forward_->host_kv_store()) throw SubmitError(Kind::BadRequest, "this instance cannot send K/V (its pool is not in host memory)");
    options.max_tokens = 1;
  }
  if (options.grammar && options.grammar->vocab().n_vocab() != tokenizer_.n_vocab())
    throw SubmitError(Kind::BadRequest, "the grammar was compiled for another vocabulary");
  auto live = std::make_unique<Live>(std::move(options), std::move(on_event), tokenizer_);
  std::lock_guard lock(mutex_);
  if (stopping_) throw SubmitError(Kind::QueueFull, "the engine is shutting down");
  if (queued_ >= config_.max_waiting + config_.max_num_seqs)
    throw SubmitError(Kind::QueueFull, fmt::format("{} requests are queued or running; try again later", queued_));
  if (config_.slo_reject && config_.slo_ttft_s > 0 && !live->options.kv_sink) {
    const double ttft = predicted_ttft_s(n_prompt);
    if (ttft > config_.slo_ttft_s) {
      ++ttft_rejected_;
      throw SubmitError(Kind::SloUnmeetable,
                        fmt::format("its first token would come in about {:.2f} s, past the {:.2f} s objective", ttft,
                                    config_.slo_ttft_s),
                        ttft - config_.slo_ttft_s);
    }
  }
  inbox_prompt_tokens_ += n_prompt;
  const RequestId id = next_id_++;
  ++queued_;
  inbox_.emplace_back(id, std::move(live));
  wake_.notify_one();
  return id;
}

void Engine::cancel(RequestId id) {
  std::lock_guard lock(mutex_);
  cancels_.push_back(id);
  wake_.notify_one();
}

TokenEvent Engine::event_for(RequestId id, const Live& live) const {
  TokenEvent e;
  e.id = id;
  e.prompt_tokens = int64_t(live.options.prompt.size());
  e.cached_prompt_tokens = live.queue_seconds >= 0 ? std::max<int64_t>(0, scheduler_->n_cached_prompt(id)) : 0;
  e.completion_tokens = live.completion;
  e.queue_seconds = std::max(0.0, live.queue_seconds);
  e.draft_tokens = live.draft_tokens;
  e.accepted_tokens = live.accepted_tokens;
  return e;
}

void Engine::drain_inbox(Events& events) {
  std::deque<std::pair<RequestId, std::unique_ptr<Live>>> inbox;
  std::vector<RequestId> cancels;
  std::vector<Handoff> handoffs;
  {
    std::lock_guard lock(mutex_);
    inbox.swap(inbox_);
    inbox_prompt_tokens_ = 0;
    cancels.swap(cancels_);
    handoffs.swap(handoffs_);
  }
  for (auto& [id, live] : inbox) {
    NewRequest r{id, live->options.prompt, live->options.max_tokens, live->options.priority, live->options.after_prefill_of};
    if (live->options.adapter) r.cache_salt = lora_cache_salt(*live->options.adapter);
    r.prefill_only = live->options.kv_sink != nullptr;
    r.prompt_logits = live->options.prompt_logprobs >= 0;
    r.logits_from = live->options.prompt_logprobs_from;
    live->prompt_logprobs_done = std::max<int64_t>(0, live->options.prompt_logprobs_from - 1);
    scheduler_->add(std::move(r));
    if (live->matcher) ++own_.grammar_requests;
    own_.prompt_tokens += int64_t(live->options.prompt.size());
    live->acceptance = spec::AcceptanceStats(16, &pooled_acceptance_);  // starts from the workload's acceptance
    live_.emplace(id, std::move(live));
  }
  for (RequestId id : cancels) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    if (std::find(finished_.begin(), finished_.end(), id) != finished_.end()) continue;
    TokenEvent e = event_for(id, *it->second);
    scheduler_->abort(id);  // a request waiting for another instance's K/V: its blocks are quarantined
    if (config_.remote_prefill) config_.remote_prefill->cancel(id);
    e.finish = FinishReason::Abort;
    ++own_.requests_aborted;
    events.emplace_back(&it->second->on_event, std::move(e));
    finished_.push_back(id);
  }
  finish_handoffs(handoffs, events);
  free_expired_quarantines();
}

void Engine::sample_step(Events& events) {
  std::vector<SampledToken> sampled;
  const std::span<const RequestId> ids = runner_->sampling_requests();
  std::vector<int32_t> history;
  for (size_t i = 0; i < ids.size(); ++i) {
    const RequestId id = ids[i];
    Live& live = *live_.at(id);
    TokenEvent e = event_for(id, live);
    std::span<const float> logits = runner_->logits(i);
    if (live.matcher) {
      masked_logits_.assign(logits.begin(), logits.end());
      if (apply_token_mask(masked_logits_, live.mask) == 0) {
        // A finished grammar (its stop token was refused by ignore_eos) or one the vocabulary cannot spell.
        e.finish = live.matcher->accepting() ? FinishReason::Stop : FinishReason::Abort;
        if (e.finish == FinishReason::Abort) ++own_.grammar_dead_ends;
        sampled.push_back({id, 0, true});
        events.emplace_back(&live.on_event, std::move(e));
        continue;
      }
      // Before the first token, a thinking model may open its thinking whatever the answer's grammar.
      if (live.thinking && live.thinking->before() && live.deferred_grammar) {
        const int32_t open = live.thinking->gate().open_token;
        masked_logits_[size_t(open)] = logits[size_t(open)];
      }
      logits = masked_logits_;
    }
    // Speculative runs: row j verifies draft j (the tokens before it kept), the last row yields one more.
    const std::span<const int32_t> draft = scheduler_->draft_in_flight(id);
    const size_t n_draft = runner_->n_rows(i) - 1;
    const std::span<const int32_t> tokens = scheduler_->tokens(id);
    history.assign(tokens.begin(), tokens.end());
    SampledToken done{id, 0, false};
    int32_t kept = 0;
    const size_t first_event = events.size();
    try {
      for (size_t j = 0; j <= n_draft; ++j) {
        if (j > 0) logits = runner_->logits(i, j);
        bool accepted = false;
        if (j < n_draft) {
          const std::span<const float> q = j < live.draft_q.size() ? std::span<const float>(live.draft_q[j])
                                                                    : std::span<const float>();
          Sampler::Verified v = live.sampler.verify(logits, history, draft[j], q);
          e.sample = std::move(v.result);
          accepted = v.accepted;
        } else {
          e.sample = live.sampler.sample(logits, history);
        }
        const int32_t token = e.sample.token;
        const bool opens_thinking = live.deferred_grammar && live.thinking->before() && token == live.thinking->gate().open_token;
        if (opens_thinking) live.matcher.reset();  // the answer's grammar waits for the close
        if (live.matcher) live.matcher->accept_token(token);  // the mask allowed it
        done.token = token;
        done.accepted_drafts = kept;
        done.finished = emit_token(id, live, e, events);
        // A draft past the thinking's close was proposed without the answer's grammar: not kept.
        const bool thinking_closed = track_thinking(live, token);
        if (!accepted || done.finished || thinking_closed) break;
        ++kept;
        history.push_back(token);
        e = event_for(id, live);
      }
    } catch (const Error&) {  // NaN logits: end this request, keep serving the others
      e = event_for(id, live);
      e.finish = FinishReason::Abort;
      events.emplace_back(&live.on_event, std::move(e));
      sampled.push_back({id, 0, true, {}, kept});
      continue;
    }
    live.draft_q.clear();
    if (n_draft > 0) {
      live.acceptance.record(int32_t(n_draft), kept);
      pooled_acceptance_.record(int32_t(n_draft), kept);
      live.draft_tokens += int64_t(n_draft);
      live.accepted_tokens += kept;
      ++own_.spec_drafts;
      own_.spec_draft_tokens += int64_t(n_draft);
      own_.spec_accepted_tokens += kept;
      for (int32_t p = 0; p < kept && p < int32_t(own_.spec_accepted_per_pos.size()); ++p) ++own_.spec_accepted_per_pos[size_t(p)];
      // This step's events carry its verify too: a request that finished in it reports every draft.
      for (size_t k = first_event; k < events.size(); ++k) {
        events[k].second.draft_tokens = live.draft_tokens;
        events[k].second.accepted_tokens = live.accepted_tokens;
      }
    }
    if (!done.finished && live.thinking && live.thinking->must_close() && !live.matcher)
      force_thinking_close(id, live, done, events);
    if (!done.finished && live.matcher && live.options.jump_forward) append_forced(id, live, done, events);
    sampled.push_back(std::move(done));
  }
  scheduler_->on_step_done(sampled);
  for (const auto& [cb, e] : events) {
    if (e.finish == FinishReason::None) continue;
    if (e.finish == FinishReason::Stop) ++own_.requests_finished_stop;
    if (e.finish == FinishReason::Length) ++own_.requests_finished_length;
    if (e.finish == FinishReason::Abort) ++own_.requests_aborted;
    finished_.push_back(e.id);
  }
}

bool Engine::emit_token(RequestId id, Live& live, TokenEvent e, Events& events) {
  const int32_t token = e.sample.token;
  std::string text;
  if ((!live.options.ignore_eos || live.matcher) && tokenizer_.is_end_of_generation(token)) {
    e.finish = FinishReason::Stop;
  } else {
    e.has_token = true;
    e.completion_tokens = ++live.completion;
    ++own_.generated_tokens;
    auto [piece, hit] = live.stops.push(live.decoder.push(token));
    text = std::move(piece);
    if (hit) e.finish = FinishReason::Stop;
    else if (live.completion >= live.options.max_tokens) e.finish = FinishReason::Length;
    else if (live.matcher && live.matcher->accepting() && !live.matcher->can_continue())
      e.finish = FinishReason::Stop;  // the grammar is complete and allows nothing more
  }
  if (e.finish != FinishReason::None && !live.stops.stopped()) {
    // Release what the detokenizer and the stop matcher still hold.
    auto [rest, hit] = live.stops.push(live.decoder.flush());
    text += rest;
    if (!hit) text += live.stops.flush();
  }
  if (!live.options.logprobs) e.sample.top.clear();
  if (live.stops.stopped()) e.stop_string = live.stops.matched();
  e.text = std::move(text);
  e.draft_tokens = live.draft_tokens;
  e.accepted_tokens = live.accepted_tokens;
  const bool finished = e.finish != FinishReason::None;
  events.emplace_back(&live.on_event, std::move(e));
  return finished;
}

void Engine::deliver(Events& events) {
  for (auto& [cb, e] : events)
    if (*cb) (*cb)(e);
  events.clear();
  if (finished_.empty()) return;
  for (RequestId id : finished_) {
    live_.erase(id);
    if (draft_) draft_->release(id);
  }
  std::lock_guard lock(mutex_);
  queued_ -= int64_t(finished_.size());
  finished_.clear();
}

namespace {

// One step's turn at the gate engines on the same cores share (engine/step_gate.h); a step that
// throws still leaves it.
class GateTurn {
 public:
  explicit GateTurn(StepGate* gate) : gate_(gate) {
    if (!gate_) return;
    gate_->enter();
    start_ = std::chrono::steady_clock::now();
  }
  ~GateTurn() {
    if (!gate_) return;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    gate_->leave(report);
  }
  GateTurn(const GateTurn&) = delete;
  GateTurn& operator=(const GateTurn&) = delete;
  StepReport report;

 private:
  StepGate* gate_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

bool Engine::step() {
  Events events;
  drain_inbox(events);
  deliver(events);
  if (!scheduler_->has_work()) {
    publish_stats(0, nullptr);
    return false;
  }
  GateTurn turn(config_.step_gate.get());
  if (config_.step_gate) scheduler_->set_prefill_cap(config_.step_gate->prefill_cap());
  const auto start = Clock::now();
  const int64_t generated_before = own_.generated_tokens;
  spec_switch_decoding_ = 0;
  propose_drafts();
  const auto target_start = Clock::now();  // the cost model times the target's step alone
  const StepPlan plan = scheduler_->schedule();
  turn.report.n_tokens = plan.n_tokens;
  for (const ScheduledRequest& s : plan.requests)
    if (s.samples && s.n_tokens == 1 + s.n_draft) turn.report.n_decode_tokens += s.n_tokens;
  for (const ScheduledRequest& s : plan.requests) {
    Live& live = *live_.at(s.id);
    if (live.queue_seconds < 0) live.queue_seconds = seconds_between(live.submitted, start);
  }
  for (const RemotePrefillStart& s : plan.remote_prefills) {
    Live& live = *live_.at(s.id);
    if (live.queue_seconds < 0) live.queue_seconds = seconds_between(live.submitted, start);
  }
  for (const RemotePrefillStart& s : plan.tier_loads) {
    Live& live = *live_.at(s.id);
    if (live.queue_seconds < 0) live.queue_seconds = seconds_between(live.submitted, start);
  }
  offload_evicted();  // before this step's writes reuse those blocks
  start_remote_prefills(plan);
  start_tier_loads(plan);
  if (plan.empty()) {  // only requests that wait for another instance's K/V or a tier's blocks
    scheduler_->on_step_done({});
    publish_stats(0, nullptr);
    deliver(events);
    return !plan.remote_prefills.empty() || !plan.tier_loads.empty();
  }
  // Prefill-only requests stream each layer's K/V as soon as it is written.
  struct SinkRun {
    KvSink* sink;
    RequestId id;
    int64_t end;
  };
  std::vector<SinkRun> sinks;
  for (const ScheduledRequest& s : plan.requests)
    if (KvSink* sink = live_.at(s.id)->options.kv_sink.get()) sinks.push_back({sink, s.id, s.first_position + s.n_tokens});
  // Another engine on the same cores that decodes may take its step between this step's layers,
  // when this step is all prompt (engine/step_gate.h).
  StepGate* yield_gate = config_.step_gate && turn.report.n_decode_tokens == 0 ? config_.step_gate.get() : nullptr;
  const std::function<void(int64_t)> layer_hook = [&](int64_t layer) {
    for (const SinkRun& x : sinks) x.sink->on_layer(layer, kv_->block_table(x.id), x.end);
    if (yield_gate) yield_gate->yield_to_decoders();
  };
  runner_->set_layer_hook(sinks.empty() && !yield_gate ? nullptr : &layer_hook);
  start_masks(plan);
  forward_started_ns_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  runner_->run(plan, *scheduler_, *kv_);
  forward_started_ns_.store(0, std::memory_order_relaxed);
  runner_->set_layer_hook(nullptr);
  finish_masks();
  prompt_logprob_step(events);
  sample_step(events);
  for (const SinkRun& x : sinks) {
    if (!scheduler_->prefill_complete(x.id)) continue;
    x.sink->finish([this, id = x.id](bool ok, const std::string& error) {
      if (!ok) std::fprintf(stderr, "KV transfer of request %lld failed: %s\n", (long long)id, error.c_str());
      std::lock_guard lock(mutex_);
      Handoff h;
      h.id = id;
      h.released = true;
      h.ok = ok;
      handoffs_.push_back(std::move(h));
      wake_.notify_one();
    });
  }
  const double seconds = seconds_between(start, Clock::now());
  int64_t logit_rows = 0;
  for (size_t i = 0; i < runner_->sampling_requests().size(); ++i) logit_rows += int64_t(runner_->n_rows(i));
  // The switch compares decode steps only (every token gives logits): prefill chunks cost the same
  // either way, and the windows they fell into looked slow whichever arm they measured.
  if (config_.speculative == SpeculativeMode::kAuto && spec_switch_decoding_ > 0 && logit_rows == plan.n_tokens)
    spec_switch_.observe(spec_switch_decoding_, own_.generated_tokens - generated_before, seconds);
  step_cost_.observe(plan.n_tokens, logit_rows, seconds_between(target_start, Clock::now()));
  if (config_.governor) account_step(plan, seconds_between(target_start, Clock::now()));
  publish_stats(seconds, &plan);
  deliver(events);
  return true;
}

double Engine::forward_running_seconds() const {
  const int64_t started = forward_started_ns_.load(std::memory_order_relaxed);
  if (started == 0) return 0;
  return double(Clock::now().time_since_epoch().count() - started) * double(Clock::period::num) / double(Clock::period::den);
}

void Engine::run_until_idle() {
  for (;;) {
    if (step()) continue;
    if (!scheduler_->has_work()) return;
    wait_for_news();  // requests wait for other instances (disaggregated)
  }
}

void Engine::wait_for_news() {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, std::chrono::milliseconds(50),
                 [&] { return stopping_ || !inbox_.empty() || !cancels_.empty() || !handoffs_.empty(); });
}

void Engine::abort_all() {
  Events events;
  drain_inbox(events);
  for (auto& [id, live] : live_) {
    if (std::find(finished_.begin(), finished_.end(), id) != finished_.end()) continue;
    TokenEvent e = event_for(id, *live);
    scheduler_->abort(id);
    e.finish = FinishReason::Abort;
    ++own_.requests_aborted;
    events.emplace_back(&live->on_event, std::move(e));
    finished_.push_back(id);
  }
  deliver(events);
  publish_stats(0, nullptr);
}

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !inbox_.empty() || !cancels_.empty() || !handoffs_.empty() || scheduler_->has_work() ||
               !quarantined_.empty();
      });
      if (stopping_) break;
    }
    bool ran = false;
    try {
      ran = step();
    } catch (const std::exception& e) {  // a failed step ends its requests, never the server
      log_error("engine step failed: {}", e.what());
      abort_all();
    }
    if (!ran) wait_for_news();  // only requests waiting for other instances, or blocks in quarantine
  }
  abort_all();
}

void Engine::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Engine::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace ridge
