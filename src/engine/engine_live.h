#pragma once
// Inside the engine (engine*.cc): what it keeps for one request in flight.
#include <chrono>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "engine/stop_strings.h"
#include "grammar/matcher.h"

namespace ridge {

// Every distinct weight once (a tied output matrix is the embedding): experts and latent attention included.
int64_t weight_bytes_of(const Model& model);

struct Engine::Live {
  Live(RequestOptions o, EventCallback cb, const Tokenizer& tokenizer)
      : options(std::move(o)), sampler(options.sampling), decoder(tokenizer), stops(options.stop),
        on_event(std::move(cb)), submitted(std::chrono::steady_clock::now()) {
    if (options.thinking) thinking.emplace(*options.thinking);
    // A grammar for the answer waits while the prompt has the thinking open; before the model's
    // first token it applies, with the open tag allowed besides (engine_thinking.cc).
    const bool waits = thinking && thinking->gate().defer_grammar && options.grammar;
    if (waits) deferred_grammar = options.grammar;
    if (options.grammar && !(waits && thinking->open())) matcher = std::make_unique<grammar::GrammarMatcher>(options.grammar);
  }
  RequestOptions options;
  Sampler sampler;
  StreamingDecoder decoder;
  StopStringMatcher stops;
  EventCallback on_event;
  std::chrono::steady_clock::time_point submitted;
  double queue_seconds = -1;  // set when a step first runs it
  bool ttft_missed = false;   // counted once as past the TTFT objective while it waited
  int64_t completion = 0;
  int64_t prompt_logprobs_done = 0;  // prompt positions whose log-probability went out (recomputes send none twice)
  std::unique_ptr<grammar::GrammarMatcher> matcher;  // with a grammar (while it applies)
  std::optional<ThinkingTracker> thinking;           // a thinking model's reasoning state
  std::shared_ptr<const grammar::CompiledGrammar> deferred_grammar;  // applies once the thinking closes
  std::vector<uint64_t> mask;                        // the matcher's mask for this step's sample
  spec::AcceptanceStats acceptance{16};              // speculative: kept drafts by position
  int64_t draft_tokens = 0, accepted_tokens = 0;
  Sampler draft_sampler{draft_params(options.sampling)};  // a draft model's draws, seeded apart
  std::vector<std::vector<float>> draft_q;               // the draft model's q per draft token

  static SamplingParams draft_params(SamplingParams p) {
    p.seed ^= 0x9e3779b97f4a7c15ULL;
    p.top_logprobs = 0;
    return p;
  }
};

}  // namespace ridge
