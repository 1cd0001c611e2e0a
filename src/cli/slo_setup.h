#pragma once
// `ridge serve --slo ...`: the step model (the planner's cost model on this machine's probe profile,
// with the calibration of `ridge plan --validate`), a short calibration burst that fits it to this
// engine's measured steps, the plan it implies (printed in words) and the governor that defends it.
// Without --slo the governor still guards against preemption cascades and accounts each step's
// roofline for /metrics.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/engine_options.h"
#include "slo/slo_governor.h"
#include "slo/slo_plan.h"

namespace ridge::cli {

struct SloCliOptions {
  std::string slo;               // "ttft=1s,itl=40ms"; empty: no objective
  bool reject = false;           // 503 + Retry-After for requests that cannot meet TTFT
  bool no_preemption_guard = false;
  bool no_calibration_burst = false;
  double calibration_seconds = 12;  // the burst's bound
  std::string profile;           // probe profile (default $RIDGE_HOME/machine.json)
};

void add_slo_options(CLI::App* cmd, SloCliOptions& o);

// This machine as the step model sees it: the probe's profile at `threads`, or a placeholder
// (roofline fractions then mean little; the fit still predicts step times) when there is none.
plan::HardwareSpec step_model_hardware(const std::string& profile, int threads);

// Sets engine_cfg.governor (and the limits the plan chose, where no flag set them). May run a
// calibration engine first, on the caller's thread.
void setup_slo(const SloCliOptions& o, const EngineCliOptions& engine_options, const LoadedModel& m, EngineConfig& engine_cfg);

}  // namespace ridge::cli
