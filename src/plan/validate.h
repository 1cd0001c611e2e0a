#pragma once
// `ridge plan --validate`: predict prefill and decode speed on this machine from the probe's
// profile, run the engine, and compare. The gap is fitted as a per-step and a per-token overhead
// (what the roofline does not see: today, mostly the reference kernels' dequantize-and-multiply
// work per weight, which runs far below the probed SIMD peak). Works whatever kernels sit underneath.
// Under mpirun with --tp / --pp the split is validated instead: rank 0 runs the model through every
// rank (dist/lockstep.h) and compares a decode step with the plan's parallel section.
#include <optional>
#include <string>

#include "plan/comm_model.h"
#include "plan/roofline.h"
#include "plan/scaling.h"
#include "plan/serving.h"

namespace ridge {
struct Model;
struct ShardRequest;
namespace dist {
struct Parallel;
}
}  // namespace ridge

namespace ridge::plan {

struct ValidateOptions {
  int64_t prompt = 64;   // tokens prefilled in one forward call
  int64_t decode = 16;   // single-token steps after it
};

struct Measured {
  double predicted_s = 0;  // roofline
  double measured_s = 0;
  double ratio() const { return measured_s / predicted_s; }  // > 1: the engine is slower than predicted
};

struct ValidateResult {
  PlanInputs inputs;        // model, formats and this machine as the prediction saw them
  ValidateOptions options;
  Measured prefill;         // the whole prompt
  Measured decode;          // one step, averaged
  StepCost prefill_cost, decode_cost;
  Overheads fitted;         // makes prediction = measurement for both
};

// Loads `model_path` (GGUF or safetensors directory), runs it and compares with `cpu`'s roofline.
ValidateResult validate_on_this_machine(const std::string& model_path, const HardwareSpec& cpu, const ValidateOptions& options);

// The formats the engine runs this model in: its stored layer and head types, f32 activations
// (int8 inside the 4/8-bit matmuls) and an f16 KV cache (kv/kv_cache.h).
Precision engine_precision(const Model& model);

// Per-step and per-token overheads that close both gaps (each clamped at zero).
Overheads fit_overheads(const Measured& prefill, int64_t prompt, const Measured& decode);

// The comparison as text: predicted, measured, ratio, and what the gap means.
std::string validate_report(const ValidateResult& r);

// A split run: the job's layout, this rank's part of the model and its threads.
struct SplitRun {
  dist::Parallel* parallel = nullptr;  // distributed, this process the driver (world rank 0)
  const ShardRequest* shard = nullptr;
  int threads_per_rank = 1;
  std::string tp_mode = "gather";      // as the shard request says, for the report
};

struct SplitValidateResult {
  PlanInputs inputs;          // the whole model, its formats, and the host the ranks share (all their threads)
  ValidateOptions options;
  ParallelPlan plan;          // tp x pp
  SplitRun run;
  double prefill_measured_s = 0;  // the whole prompt through the ranks (the planner prices no split prefill)
  Measured decode;                // one step, averaged; predicted by parallel_decode at batch 1
  ParallelDecode predicted;       // that prediction's parts: per-stage roofline, communication
  CommModel comm;                 // how it priced the messages
};

// The host as the split's prediction sees it: the probe's figures at all ranks' threads when the
// ranks share it (the measured communication says so; parallel_decode then gives each an even
// share), else one rank's.
HardwareSpec split_host(const std::string& profile_path, int threads_per_rank, int ranks);

// On the driver of a split job whose other ranks run dist::run_worker on their shards: loads this
// rank's shard of `model_path`, runs the prompt and the decode steps through the lockstep forward,
// and compares a step with parallel_decode on `host`. The workers stop when it returns.
SplitValidateResult validate_split_on_this_machine(const std::string& model_path, const HardwareSpec& host,
                                                   const ValidateOptions& options, const SplitRun& run);

std::string split_validate_report(const SplitValidateResult& r);

// Fitted overheads persist in $RIDGE_HOME/plan_calibration.json so later local plans include them.
void save_calibration(const ValidateResult& r, const std::string& path);
std::optional<Overheads> load_calibration(const std::string& path);
std::string default_calibration_path();

}  // namespace ridge::plan
