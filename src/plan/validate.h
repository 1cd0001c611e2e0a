#pragma once
// `ridge plan --validate`: predict prefill and decode speed on this machine from the probe's
// profile, run the engine, and compare. The gap is fitted as a per-step and a per-token overhead
// (what the roofline does not see: today, mostly the reference kernels' dequantize-and-multiply
// work per weight, which runs far below the probed SIMD peak). Works whatever kernels sit underneath.
#include <string>

#include "plan/roofline.h"
#include "plan/serving.h"

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

// Per-step and per-token overheads that close both gaps (each clamped at zero).
Overheads fit_overheads(const Measured& prefill, int64_t prompt, const Measured& decode);

// The comparison as text: predicted, measured, ratio, and what the gap means.
std::string validate_report(const ValidateResult& r);

// Fitted overheads persist in $RIDGE_HOME/plan_calibration.json so later local plans include them.
void save_calibration(const ValidateResult& r, const std::string& path);
std::optional<Overheads> load_calibration(const std::string& path);
std::string default_calibration_path();

}  // namespace ridge::plan
