#pragma once
// `ridge plan`'s output: each analysis as a titled, aligned table with the numbers behind it, and
// the same content as JSON. Sections can be picked by name.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "plan/model_source.h"
#include "plan/scaling.h"
#include "plan/svg_roofline.h"

namespace ridge::plan {

struct PlanOptions {
  int64_t context = 8192;                       // cached tokens per sequence while decoding
  std::vector<int64_t> batches = {1, 8, 32, 128};
  int64_t prompt = 1024;                        // prefill / TTFT prompt length
  double itl_slo_s = 0.040;
  std::optional<double> price_per_hour;         // overrides the hardware entry's
  ParallelPlan parallel;                        // a plan to evaluate besides the TP sweep (kvp > 1: Helix)
  double kv_pool_bytes = 0;                     // per-device KV budget for capacities; 0 = memory after the weights
  TrafficMix traffic;
  SpeculativeDecode speculative;
  int64_t gemm_tokens = 0;                      // GEMM-M for the shape table; 0 = the prompt length
  std::vector<std::string> quant_formats = {"bf16", "fp8", "int8", "int4", "nvfp4"};
  std::set<std::string> sections;               // empty = all that apply
};

// Section names, in print order.
const std::vector<std::string>& plan_section_names();

struct PlanReport {
  std::string text;
  nlohmann::json json;
};
PlanReport build_plan_report(const PlanInputs& in, const PlanModel& model, const PlanOptions& options);

// The ops of a decode step (batch 1 and the largest batch) and of a prefill, for the roofline plot.
std::vector<RooflinePoint> roofline_points(const PlanInputs& in, const PlanOptions& options);

}  // namespace ridge::plan
