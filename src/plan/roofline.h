#pragma once
// The roofline: an op takes max(bytes / bandwidth, FLOPs / peak). A step is the sum of its ops,
// plus whatever fixed cost the engine adds per step and per token (launches, scheduling, sampling).
#include "plan/cost_model.h"
#include "plan/hardware.h"

namespace ridge::plan {

// Costs a roofline does not see; learned from a measurement (ridge plan --validate).
struct Overheads {
  double per_step_s = 0;   // each forward call
  double per_token_s = 0;  // each token in a step
};

struct OpTime {
  double memory_s = 0;   // bytes / bandwidth
  double compute_s = 0;  // FLOPs / peak
  double seconds() const { return memory_s > compute_s ? memory_s : compute_s; }
  bool memory_bound() const { return memory_s >= compute_s; }
};
OpTime op_time(const OpCost& op, const HardwareSpec& hw);

struct StepTime {
  double seconds = 0;    // sum of op rooflines + overheads
  double memory_s = 0;   // all bytes / bandwidth: a lower bound
  double compute_s = 0;  // all FLOPs at each op's peak: a lower bound
  double overhead_s = 0;
  bool memory_bound() const { return memory_s >= compute_s; }
};
StepTime step_time(const StepCost& cost, const HardwareSpec& hw, const Overheads& overheads = {});

// The first seed's closed form for a dense decode step: weights read once, each sequence's KV read,
// 2 x params FLOPs per token. `batch` sequences at `context` cached tokens.
struct DecodeTotals {
  double weight_bytes = 0;
  double kv_bytes_per_token = 0;  // all layers
  double flops_per_token = 0;
};
double closed_form_step_seconds(const DecodeTotals& totals, int64_t batch, int64_t context, double bandwidth,
                                double peak);

}  // namespace ridge::plan
