// Prompt log-probabilities (echo with logprobs, vLLM's prompt_logprobs): the runner returns every
// prompt position's logits for requests that asked (their prompt is computed in full, never served
// from the prefix cache); token p's log-probability comes from the logits at position p - 1, raw
// (no penalties, bias or temperature), as vLLM reports them.
#include "engine/batch_runner.h"
#include "engine/engine.h"
#include "engine/engine_live.h"
#include "engine/sampling_steps.h"

namespace ridge {

void Engine::prompt_logprob_step(Events& events) {
  for (const BatchRunner::PromptRun& run : runner_->prompt_runs()) {
    Live& live = *live_.at(run.id);
    const std::span<const int32_t> tokens = scheduler_->tokens(run.id);
    const int64_t n_prompt = scheduler_->n_prompt(run.id);
    std::vector<SampleResult> entries;
    for (int64_t j = 0; j < run.n_positions; ++j) {
      const int64_t target = run.first_position + j + 1;  // the token these logits predict
      if (target >= n_prompt) break;
      if (target <= live.prompt_logprobs_done) continue;  // sent before a preemption
      const std::span<const float> row = runner_->row(run.first_row + size_t(j));
      const double lse = log_sum_exp(row);
      const int32_t token = tokens[size_t(target)];
      SampleResult r{token, float(double(row[size_t(token)]) - lse), {}};
      if (live.options.prompt_logprobs > 0) r.top = top_logprobs(row, live.options.prompt_logprobs, lse);
      entries.push_back(std::move(r));
      live.prompt_logprobs_done = target;
    }
    if (entries.empty()) continue;
    TokenEvent e = event_for(run.id, live);
    e.prompt_logprobs = std::move(entries);
    events.emplace_back(&live.on_event, std::move(e));
  }
}

}  // namespace ridge
