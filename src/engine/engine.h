#pragma once
// The serving engine: many requests at once over one model. Each step the scheduler picks a ragged
// batch (decode tokens and prefill chunks of many requests), the runner computes it in one forward
// pass over the paged KV cache, and each request that reached its last token samples its next one.
// Results flow back as events, one per generated token, through the callback given at submit().
//
// Threading: submit(), cancel() and stats() may be called from any thread. Steps run either on the
// caller's thread (step(), run_until_idle(): offline batch use) or on the engine's own loop thread
// (start()/stop(): the server). Callbacks run on the thread that runs the step and must be quick
// (hand the event to a queue; never call back into the engine from a callback).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/device.h"
#include "engine/engine_stats.h"
#include "engine/step_gate.h"
#include "engine/memory_budget.h"
#include "engine/finish_reason.h"
#include "engine/thinking.h"
#include "engine/kv_handoff.h"
#include "engine/sampler.h"
#include "grammar/compiled_grammar.h"
#include "engine/scheduler.h"
#include "spec/draft_model.h"
#include "spec/ngram_proposer.h"
#include "spec/spec_policy.h"
#include "kv/kv_dtype.h"
#include "kv/kv_events.h"
#include "kv/kv_store.h"
#include "model/lora/lora_adapter.h"
#include "kv/kv_tiers.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

class BatchRunner;
namespace slo {
class SloGovernor;
}
namespace dist {
struct Parallel;
}
class MaskWorker;
class TierLoader;
class PagedForward;

// Speculative decoding (src/spec): off; ngram = prompt lookup, always the longest draft a match
// gives; draft = a draft model (EngineConfig::draft_model), always num_speculative_tokens; auto =
// the draft model when there is one, else prompt lookup, drafting only where the measured step
// cost and acceptance say it pays.
enum class SpeculativeMode { kOff, kNgram, kDraft, kAuto };

struct EngineConfig {
  int n_threads = 0;            // <= 0: one per core
  int64_t n_ctx = 0;            // max tokens of one sequence (prompt + output); 0: the model's training context
  int64_t kv_memory_bytes = 0;  // KV pool budget; 0: enough for max_num_seqs full-context sequences, capped at 25% of RAM
  int32_t block_size = 16;      // tokens per KV block
  KvDtype kv_dtype = KvDtype::F16;
  bool prefix_caching = true;
  int64_t max_batched_tokens = 512;  // tokens per step (chunked prefill splits longer prompts)
  int64_t prefill_chunk = 64;        // prompt tokens per step while others decode (0: max_batched_tokens)
  int32_t max_num_seqs = 64;         // running sequences at once
  bool priorities = false;
  int64_t max_waiting = 1024;        // submit() refuses more queued requests (back-pressure)
  Device device = Device::Cpu;       // cpu, cuda, or auto (cuda when a GPU is present)
  SpeculativeMode speculative = SpeculativeMode::kOff;
  int32_t num_speculative_tokens = 5;  // draft tokens per request per step, at most
  spec::NgramOptions ngram;
  const Model* draft_model = nullptr;  // with the target's vocabulary; must outlive the engine
  float draft_p_min = 0.0f;            // a request stops drafting after a token the draft gives less (spec/draft_model.h)
  int64_t draft_vocab_size = 0;        // the draft's head scores only the first N tokens (0: all; spec/draft_model.h)
  dist::Parallel* parallel = nullptr;  // the model is split across ranks (dist/world.h); this is rank 0
  // Disaggregated decode: long prompts are prefilled by another instance (engine/kv_handoff.h).
  std::shared_ptr<RemotePrefill> remote_prefill;
  const KvAllocator* kv_allocator = nullptr;  // the KV pool's memory (a KV transport's registered memory)
  // Tiered KV cache: prefix blocks evicted from the pool go here, and prefix hits there are loaded
  // back instead of computed (kv/kv_tiers; its block bytes must be this pool's).
  std::shared_ptr<KvTiers> kv_tiers;
  // Told of every prefix-cache block stored or evicted (KV-aware routers: kv_events/); null: nobody.
  std::shared_ptr<KvEventSink> kv_events;
  // Latency objectives (slo/): the governor bounds each step and guards against preemption
  // cascades, and its step model accounts every step's roofline; null: none of it.
  std::shared_ptr<slo::SloGovernor> governor;
  double slo_ttft_s = 0;    // counts (and with slo_reject refuses) requests that cannot meet it
  bool slo_reject = false;
  // Several engines on one machine (models/): each step runs inside this engine's turn at the
  // shared gate, its prompt tokens capped while other engines decode; null: the machine is ours.
  std::shared_ptr<StepGate> step_gate;
};

struct RequestOptions {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int32_t max_tokens = 128;       // clamped to what the context leaves after the prompt
  std::vector<std::string> stop;  // stop strings (not included in the output)
  bool ignore_eos = false;
  int32_t priority = 0;           // smaller first, when the engine has priorities on
  bool logprobs = false;          // fill TokenEvent::sample's logprob and top alternatives
  // n > 1 samples of one prompt: wait until this request has computed its prompt, then take its
  // blocks from the prefix cache instead of computing the prompt again.
  RequestId after_prefill_of = -1;
  // Structured output: every sampled token is one the grammar allows (compiled for this engine's
  // tokenizer); bytes the grammar forces are appended without running the model (jump-forward).
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  bool jump_forward = true;
  // A thinking model: its tags' tokens, a thinking budget, and whether the grammar waits for the
  // thinking to close (engine/thinking.h).
  std::optional<ThinkingGate> thinking;
  // >= 0: report every prompt token's log-probability under the model (from the second on) with
  // this many alternatives, in TokenEvent::prompt_logprobs; the prompt is then computed in full.
  int32_t prompt_logprobs = -1;
  int64_t prompt_logprobs_from = 1;  // ... for prompt tokens from this one on (earlier ones may come from the prefix cache)
  // Disaggregated prefill: compute the prompt's K/V into this sink and sample nothing; the last
  // event (Stop, or Abort when the transfer failed) comes once the sink has released the blocks.
  std::shared_ptr<KvSink> kv_sink;
  // A LoRA adapter of this engine's model (model/lora): the request's tokens get its low-rank
  // addends in the same steps as everyone else's, and its prefix-cache blocks are its own.
  std::shared_ptr<const lora::LoraAdapter> adapter;
};

// One per sampled token; the last event of a request has finish != None (it may carry no token).
struct TokenEvent {
  RequestId id = 0;
  bool has_token = false;
  SampleResult sample;           // the token and, with logprobs, its log-probability and alternatives
  bool forced = false;           // appended by the grammar without sampling (jump-forward)
  std::string text;              // text completed by this token (complete UTF-8, clear of stop strings)
  FinishReason finish = FinishReason::None;
  std::string stop_string;       // finish == Stop because of this stop string (empty: EOS or grammar)
  // RequestOptions::prompt_logprobs: the next prompt tokens' log-probabilities, in order, each
  // delivered once (an event without a token); the first prompt token has none.
  std::vector<SampleResult> prompt_logprobs;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // of the prompt, served from the prefix cache
  int64_t completion_tokens = 0;     // generated so far, including this one
  int64_t draft_tokens = 0;          // speculative: draft tokens verified for this request so far
  int64_t accepted_tokens = 0;       // ... and kept
  double queue_seconds = 0;          // from submit() to the first step that ran the request
};
using EventCallback = std::function<void(const TokenEvent&)>;

// submit() refused the request: a bad request (prompt empty or longer than the context, bad
// sampling parameters) or a full queue.
// SloUnmeetable: with EngineConfig::slo_reject, the request's predicted time to first token is
// already past the objective; retry_after_s says when the backlog ahead of it should have cleared.
struct SubmitError : std::runtime_error {
  enum class Kind { BadRequest, ContextExceeded, QueueFull, SloUnmeetable, MemoryLimit };
  SubmitError(Kind k, const std::string& message, double retry_after = 0)
      : std::runtime_error(message), kind(k), retry_after_s(retry_after) {}
  Kind kind;
  double retry_after_s = 0;
};

class Engine {
 public:
  Engine(const Model& model, const Tokenizer& tokenizer, const EngineConfig& config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  int64_t n_ctx() const { return config_.n_ctx; }
  const KvMemoryPlan& memory_plan() const { return memory_plan_; }
  const MemoryBudget& memory_budget() const { return memory_; }
  int64_t weight_bytes() const;
  // How long the forward pass in progress has run (0: none). Any thread may ask: a split model
  // whose rank stopped answering shows here before the communicator's timeout ends the job.
  double forward_running_seconds() const;
  bool split_across_ranks() const { return config_.parallel != nullptr; }

  // Queues a request; events arrive through on_event. Throws SubmitError.
  RequestId submit(RequestOptions options, EventCallback on_event);
  // Stops a request wherever it is and frees its KV blocks at the next step boundary; its last
  // event has finish == Abort. Unknown or finished ids are ignored.
  void cancel(RequestId id);

  // Offline use: one step on the caller's thread (false when there was nothing to do).
  bool step();
  void run_until_idle();

  // Server use: a loop thread that steps while there is work and sleeps otherwise.
  void start();
  void stop();  // cancels what is left (each gets its Abort event) and joins the loop

  EngineStats stats() const;
  // The KV pool in host memory (nullptr on a GPU): what a KV transfer sends from.
  const KvStore* host_kv_store() const;

 private:
  struct Live;  // a request in flight: its options, sampler, detokenizer, stop matcher, callback
  using Events = std::vector<std::pair<EventCallback*, TokenEvent>>;
  void drain_inbox(Events& events);  // submissions and cancellations from other threads enter here
  void sample_step(Events& events);
  void prompt_logprob_step(Events& events);  // engine_prompt_logprobs.cc
  void propose_drafts();  // speculative: drafts for the requests that decode next step
  void propose_with_draft_model(const std::vector<RequestId>& ids, int64_t other_decodes);
  // One token the request yields this step (sampled, forced or a kept draft): its event, with the
  // finish it causes; true when the request finished.
  bool emit_token(RequestId id, Live& live, TokenEvent e, Events& events);
  void start_masks(const StepPlan& plan);  // grammar masks of this step's samplers, on the worker
  void finish_masks();
  void append_forced(RequestId id, Live& live, SampledToken& done, Events& events);
  // One token appended without sampling (jump-forward, a thinking budget's close); true when it ends the request.
  bool push_forced(RequestId id, Live& live, int32_t token, SampledToken& done, Events& events);
  // Thinking models (engine_thinking.cc): a token's effect on the thinking (the grammar takes over
  // once it closes; true then), and the close forced once the budget is spent.
  bool track_thinking(Live& live, int32_t token);
  void force_thinking_close(RequestId id, Live& live, SampledToken& done, Events& events);
  TokenEvent event_for(RequestId id, const Live& live) const;
  void publish_stats(double step_seconds, const StepPlan* plan);
  // The governor's part of a step: refit the step model, the preemption guard, the roofline stats.
  void account_step(const StepPlan& plan, double target_seconds);
  // With a TTFT objective: the predicted seconds until a new prompt of n tokens has its first token.
  double predicted_ttft_s(int64_t n_prompt) const;
  void deliver(Events& events);  // callbacks, outside the lock; finished requests are dropped after
  void abort_all();
  void loop();
  void wait_for_news();  // after a step that ran nothing: sleep until something arrives (or briefly)
  // Disaggregation: completions from other threads (a sink released, a remote prefill over).
  struct Handoff {
    RequestId id = 0;
    bool released = false;  // true: a KvSink's blocks; false: a RemotePrefill's result
    bool tier = false;      // ... or a tier load's
    bool ok = false;
    RemotePrefillResult result;
  };
  void start_remote_prefills(const StepPlan& plan);
  void offload_evicted();                      // tiered KV: evicted prefix blocks' bytes, before they are overwritten
  void start_tier_loads(const StepPlan& plan);
  void finish_handoffs(std::vector<Handoff>& handoffs, Events& events);
  void free_expired_quarantines();
  struct Quarantined {
    SeqId seq;
    std::chrono::steady_clock::time_point until;
  };
  std::vector<Quarantined> quarantined_;

  const Model& model_;
  const Tokenizer& tokenizer_;
  EngineConfig config_;
  KvMemoryPlan memory_plan_;
  MemoryBudget memory_;  // the memory limit the pool was sized in, and what it leaves a request
  std::unique_ptr<KvManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<PagedForward> forward_;  // the forward pass on config_.device, with the KV store
  std::unique_ptr<BatchRunner> runner_;
  std::unique_ptr<MaskWorker> mask_worker_;  // started with the first request under a grammar
  std::vector<float> masked_logits_;         // (n_vocab) one request's logits under its mask
  std::unordered_map<RequestId, std::unique_ptr<Live>> live_;  // touched only by the stepping thread
  std::vector<RequestId> finished_;  // dropped from live_ after their last callback
  EngineStats own_;                  // the stepping thread's counters; published into stats_
  std::atomic<int64_t> forward_started_ns_{0};  // the running forward pass's start (steady clock), 0: none
  spec::StepCostModel step_cost_;    // measured step time by tokens, for speculation's choices
  spec::SpeculationSwitch spec_switch_;  // auto: whether speculating pays at this load, measured
  int64_t spec_switch_decoding_ = 0;     // decoding requests of the step the switch will hear about
  spec::AcceptanceStats pooled_acceptance_{16};  // every request's verifies: a new request's prior
  std::unique_ptr<spec::DraftModel> draft_;  // with a draft model

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::deque<std::pair<RequestId, std::unique_ptr<Live>>> inbox_;
  std::vector<RequestId> cancels_;
  std::vector<Handoff> handoffs_;
  RequestId next_id_ = 1;
  int64_t queued_ = 0;  // submitted and not finished
  EngineStats stats_;
  // With a TTFT objective: the prompt tokens ahead of a new request and the rate they go through.
  int64_t inbox_prompt_tokens_ = 0;
  int64_t backlog_prompt_tokens_ = 0;
  double prompt_tokens_per_s_ = 0;  // predicted under the current decodes; 0: not yet known
  int64_t ttft_rejected_ = 0;
  bool stopping_ = false;
  std::thread thread_;
  std::unique_ptr<TierLoader> tier_loader_;  // last: destroyed first, its callbacks use the members above
};

}  // namespace ridge
