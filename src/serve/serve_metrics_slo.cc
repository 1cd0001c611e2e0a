// The latency objectives' guard and each step's roofline in /metrics and the page's JSON.
#include <string>

#include "plan/ragged_cost.h"
#include "serve/serve_metrics.h"

namespace ridge {
namespace {

const std::vector<double>& fraction_bounds() {
  static const std::vector<double> b(kRooflineFractionBuckets.begin(), kRooflineFractionBuckets.end());
  return b;
}

std::vector<uint64_t> counts(const SloStats::FractionHistogram& h) { return {h.counts.begin(), h.counts.end()}; }

// Decode-only steps among the recent ones: their bytes over their seconds.
double recent_decode_bandwidth(const SloStats& s) {
  double bytes = 0, seconds = 0;
  for (const StepRooflinePoint& p : s.recent)
    if (p.tokens > 0 && p.decode_tokens == p.tokens) bytes += p.bytes, seconds += p.seconds;
  return seconds > 0 ? bytes / seconds : 0;
}

}  // namespace

void ServeMetrics::mirror_slo(const SloStats& s) {
  if (!s.enabled) return;
  auto& r = registry_;
  r.gauge("ridge:machine_memory_bandwidth_bytes_per_second", "The probed memory bandwidth the roofline fractions are of.")
      .set(s.memory_bw);
  r.gauge("ridge:machine_compute_peak_flops", "The probed compute peak of the weight GEMMs (the roofline's flat ceiling).")
      .set(s.gemm_peak);
  for (size_t i = 0; i < 3; ++i) {
    const std::string stage(plan::stage_name(plan::kStages[i]));
    r.histogram("ridge:roofline_bandwidth_fraction_" + stage,
                "Per step: this stage's bytes (cost model) over its share of the step's time, as a fraction of the probed bandwidth.",
                fraction_bounds())
        .assign(counts(s.stage_bandwidth[i]), s.stage_bandwidth[i].sum);
    r.histogram("ridge:roofline_compute_fraction_" + stage,
                "Per step: this stage's FLOPs at the probed peaks over its share of the step's time.", fraction_bounds())
        .assign(counts(s.stage_compute[i]), s.stage_compute[i].sum);
    r.counter("ridge:roofline_bytes_total", "Bytes the cost model counts for each stage of every step.", {{"stage", stage}})
        .set(s.stage_bytes[i]);
    r.counter("ridge:roofline_flops_total", "FLOPs the cost model counts for each stage of every step.", {{"stage", stage}})
        .set(s.stage_flops[i]);
    r.counter("ridge:roofline_seconds_total", "Step time apportioned to each stage by the fitted step model.", {{"stage", stage}})
        .set(s.stage_seconds[i]);
  }
  r.histogram("ridge:roofline_bandwidth_fraction_step", "Per step: all its bytes over its time, as a fraction of the probed bandwidth.",
              fraction_bounds())
      .assign(counts(s.step_bandwidth), s.step_bandwidth.sum);
  r.histogram("ridge:roofline_compute_fraction_step", "Per step: all its FLOPs at the probed peaks over its time.", fraction_bounds())
      .assign(counts(s.step_compute), s.step_compute.sum);
  r.histogram("ridge:roofline_decode_bandwidth_fraction", "Per step that only decodes: its bytes over its time, as a fraction of bandwidth.",
              fraction_bounds())
      .assign(counts(s.decode_step_bandwidth), s.decode_step_bandwidth.sum);
  r.counter("ridge:roofline_decode_steps_total", "Steps that only decode.").set(double(s.decode_steps));
  r.counter("ridge:roofline_decode_bytes_total", "Bytes of the steps that only decode.").set(s.decode_step_bytes);
  r.counter("ridge:roofline_decode_seconds_total", "Time of the steps that only decode.").set(s.decode_step_seconds);
  r.gauge("ridge:roofline_decode_recent_bandwidth_fraction",
          "The recent decode-only steps' bytes over their time, as a fraction of the probed bandwidth.")
      .set(s.memory_bw > 0 ? recent_decode_bandwidth(s) / s.memory_bw : 0);
  r.gauge("ridge:step_model_relative_error", "Mean |predicted - measured| / measured step time, recent steps.").set(s.model_error);
  // The guard.
  r.gauge("ridge:slo_step_bound_seconds", "No step that decodes is planned above this (0: no ITL objective).").set(s.step_bound_s);
  r.gauge("ridge:slo_running_cap", "Running requests at most, as the preemption guard set it (0: no cap beyond --max-num-seqs).")
      .set(double(s.running_cap));
  r.counter("ridge:slo_preemption_cascades_total", "Times the preemption guard lowered the running-request cap.")
      .set(double(s.cascades));
  r.counter("ridge:slo_deferred_prefill_tokens_total", "Prompt positions left for a later step to keep a step within the ITL bound.")
      .set(double(s.held_tokens));
  r.counter("ridge:slo_deferred_admissions_total", "Steps in which an admission waited because the decodes filled the ITL bound.")
      .set(double(s.held_admissions));
  r.counter("ridge:slo_ttft_unmeetable_total", "Requests still waiting for their first token past the TTFT objective.")
      .set(double(s.ttft_unmeetable));
  r.counter("ridge:slo_rejected_total", "Requests refused (503) because their predicted TTFT was past the objective.")
      .set(double(s.ttft_rejected));
}

nlohmann::json ServeMetrics::slo_json(const SloStats& s) const {
  if (!s.enabled) return nullptr;
  nlohmann::json points = nlohmann::json::array();
  for (const StepRooflinePoint& p : s.recent)
    points.push_back({{"s", p.seconds}, {"flops", p.flops}, {"bytes", p.bytes}, {"tokens", p.tokens},
                      {"decode", p.decode_tokens}, {"predicted_s", p.predicted_s}});
  nlohmann::json stages = nlohmann::json::array();
  for (size_t i = 0; i < 3; ++i)
    stages.push_back({{"name", plan::stage_name(plan::kStages[i])}, {"bytes", s.stage_bytes[i]}, {"flops", s.stage_flops[i]},
                      {"seconds", s.stage_seconds[i]}});
  nlohmann::json goodput = nlohmann::json::object();
  for (const SloCounters& c : slo_counters_) goodput[c.name] = {{"met", c.met->value()}, {"missed", c.missed->value()}};
  return {{"memory_bw", s.memory_bw},
          {"compute_peak", s.gemm_peak},
          {"measured_machine", s.measured_machine},
          {"steps", points},
          {"stages", stages},
          {"decode_bandwidth_fraction", s.memory_bw > 0 ? recent_decode_bandwidth(s) / s.memory_bw : 0.0},
          {"model_error", s.model_error},
          {"step_bound_s", s.step_bound_s},
          {"running_cap", s.running_cap},
          {"cascades", s.cascades},
          {"deferred_prefill_tokens", s.held_tokens},
          {"ttft_unmeetable", s.ttft_unmeetable},
          {"rejected", s.ttft_rejected},
          {"slo", slo_.empty() ? "" : slo_.describe()},
          {"goodput", goodput}};
}

}  // namespace ridge
