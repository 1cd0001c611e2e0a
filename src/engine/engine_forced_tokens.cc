// Tokens a request yields without sampling -- a grammar's jump-forward, a thinking budget's close --
// and the thinking tracker that follows every token: when the thinking closes, a grammar meant for
// the answer starts (vLLM's rule: structured output never constrains the thinking).
#include "engine/engine.h"
#include "engine/engine_live.h"
#include "engine/grammar_step.h"

namespace ridge {

// Jump-forward: the tokens the grammar forces after this one join the request's sequence now (its
// next step computes them with the next sample, a prefill of a few tokens), each with its event.
void Engine::append_forced(RequestId id, Live& live, SampledToken& done, Events& events) {
  std::vector<int32_t> forced = jump_forward(*live.matcher, tokenizer_);
  const int64_t room = live.options.max_tokens - live.completion;
  if (static_cast<int64_t>(forced.size()) > room) {
    live.matcher->rollback(static_cast<int32_t>(forced.size() - room));
    forced.resize(room);
  }
  for (int32_t token : forced) {
    ++own_.grammar_forced_tokens;
    if (push_forced(id, live, token, done, events)) return;
  }
}

bool Engine::push_forced(RequestId id, Live& live, int32_t token, SampledToken& done, Events& events) {
  TokenEvent f = event_for(id, live);
  f.has_token = true;
  f.forced = true;
  f.sample = SampleResult{token, 0.0f, {}};  // probability 1: nothing else could follow
  f.completion_tokens = ++live.completion;
  ++own_.generated_tokens;
  auto [piece, hit] = live.stops.push(live.decoder.push(token));
  f.text = std::move(piece);
  track_thinking(live, token);
  done.forced.push_back(token);
  if (hit || live.completion >= live.options.max_tokens) {
    // A stop string inside forced text, or the last token allowed: end here.
    f.finish = hit ? FinishReason::Stop : FinishReason::Length;
    if (hit) f.stop_string = live.stops.matched();
    if (!live.stops.stopped()) {
      auto [rest, hit2] = live.stops.push(live.decoder.flush());
      f.text += rest;
      if (!hit2) f.text += live.stops.flush();
    }
    done.finished = true;
  }
  events.emplace_back(&live.on_event, std::move(f));
  return done.finished;
}


bool Engine::track_thinking(Live& live, int32_t token) {
  if (!live.thinking || !live.thinking->on_token(token)) return false;
  if (live.deferred_grammar && !live.matcher) live.matcher = std::make_unique<grammar::GrammarMatcher>(live.deferred_grammar);
  return true;
}

void Engine::force_thinking_close(RequestId id, Live& live, SampledToken& done, Events& events) {
  for (int32_t token : live.thinking->gate().forced_close) {
    if (push_forced(id, live, token, done, events)) return;
    if (live.thinking->closed()) return;  // what follows the tag is the answer's
  }
}

}  // namespace ridge
