#pragma once
// Sizing the engine from its latency objectives (seed 000: decide the SLO first, then find the
// largest batch that holds it). From the step model (the planner's cost model, calibrated on this
// machine) and the KV pool: the prefill chunk, the running-request limit and the step budget, the
// streams the machine holds at each context within the inter-token objective, and the longest
// prompt that still meets the TTFT objective, idle and under that load.
#include <cstdint>
#include <string>
#include <vector>

#include "loadgen/slo.h"
#include "slo/step_model.h"

namespace ridge::slo {

struct SloPlanInputs {
  loadgen::Slo slo;              // ttft and itl (tpot when itl is absent) are what it plans for
  int64_t n_ctx = 4096;          // tokens of one sequence
  int64_t kv_tokens = 0;         // positions the KV pool holds (0: unbounded)
  int64_t max_batched_tokens = 0;  // 0: the plan picks
  int64_t design_context = 0;    // context the limits are sized at (0: min(1024, n_ctx / 2))
  double margin = 0.85;          // steps are planned to this fraction of the ITL objective (jitter, sampling)
  // A decode step of one stream at the design context as measured (0: not measured). When it fits
  // the step bound the plan holds at least one stream there, whatever the model predicts.
  double measured_one_stream_s = 0;
};

struct ContextCapacity {
  int64_t context = 0;
  int64_t by_latency = 0;  // streams whose decodes and a prefill chunk fit the step bound
  int64_t by_memory = 0;   // streams whose KV fits the pool
  int64_t streams() const { return std::min(by_latency, by_memory); }
};

struct SloPlan {
  double itl_s = 0;            // the objective planned for (0: none)
  double ttft_s = 0;
  double step_bound_s = 0;     // itl x margin
  double decode_bound_s = 0;   // step_bound less the prefill chunk's share
  int64_t prefill_chunk = 0;
  int64_t max_batched_tokens = 0;
  int32_t max_num_seqs = 0;
  int64_t design_context = 0;
  int64_t design_streams = 0;  // streams at the design context
  std::vector<ContextCapacity> capacity;
  int64_t max_prompt_idle = 0;    // longest prompt meeting TTFT on an idle engine
  int64_t max_prompt_loaded = 0;  // ... while design_streams decode at the design context
  double idle_ttft_2k_s = 0;      // TTFT of a 2,000-token prompt on an idle engine (context)
  std::vector<std::string> notes;  // what could not be met
};

SloPlan plan_for_slo(const StepModel& model, const SloPlanInputs& in);
std::string describe(const SloPlan& plan);  // the plan in words and a table, for the log and `ridge plan`

// Largest batch of decodes at `context`, with a prefill chunk of `chunk` tokens (0: none), whose
// predicted step fits `bound_s`; searched up to `limit`.
int64_t streams_within(const StepModel& model, int64_t context, int64_t chunk, double bound_s, int64_t limit);
// Predicted seconds to prefill a prompt of n tokens in chunks of `chunk` while `streams` decode at `context`.
double prefill_seconds(const StepModel& model, int64_t n, int64_t chunk, int64_t streams, int64_t context);

}  // namespace ridge::slo
