#include "cli/slo_setup.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include "cli/parallel_options.h"
#include "core/log.h"
#include "plan/validate.h"

namespace ridge::cli {
namespace {

using Clock = std::chrono::steady_clock;

// What the calibration burst leaves for the plan.
struct Calibration {
  int64_t kv_tokens = 0, kv_bytes = 0;  // the pool the serving engine will have
  double one_stream_s = 0;              // median decode step of one stream at `one_stream_context` (0: none)
  int64_t one_stream_context = 0;
};

// A throwaway engine stepped on this thread until a deadline: when time runs out it cancels what
// is left, so the burst ends on time however slow (or busy) the machine is.
class Burst {
 public:
  Burst(Engine& engine, Clock::time_point deadline, int32_t n_vocab) : engine_(engine), deadline_(deadline), token_(0, n_vocab - 1) {}

  void submit(int64_t prompt, int32_t output, bool* first_token = nullptr) {
    RequestOptions r;
    prompt = std::max<int64_t>(1, std::min<int64_t>(prompt, engine_.n_ctx() - output - 1));
    for (int64_t i = 0; i < prompt; ++i) r.prompt.push_back(token_(rng_));
    r.max_tokens = output;
    r.ignore_eos = true;
    ids_.push_back(engine_.submit(std::move(r), [first_token](const TokenEvent& e) {
      if (first_token && e.has_token) *first_token = true;
    }));
  }
  // Steps until idle; false when the deadline came first (what was left is cancelled).
  // `after` (when set) gets the seconds of each step that ran once *after_flag was true.
  bool run(std::vector<double>* after = nullptr, const bool* after_flag = nullptr) {
    for (;;) {
      if (Clock::now() > deadline_) {
        for (RequestId id : ids_) engine_.cancel(id);
        engine_.run_until_idle();
        ids_.clear();
        return false;
      }
      const bool timing = after && after_flag && *after_flag;
      const auto t0 = Clock::now();
      if (!engine_.step()) break;
      if (timing) after->push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    ids_.clear();
    return true;
  }

 private:
  Engine& engine_;
  Clock::time_point deadline_;
  std::mt19937 rng_{7};
  std::uniform_int_distribution<int32_t> token_;
  std::vector<RequestId> ids_;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Prompts and decodes of several sizes, run through a throwaway engine so the step model sees
// prefill chunks, lone and batched decodes and mixed steps of this engine before the first client
// does. Bounded by `budget_s` (sizes scale with the warm-up's speed); one progress line per phase.
Calibration calibration_burst(const LoadedModel& m, EngineConfig cfg, std::shared_ptr<slo::StepModel> model, int64_t design_context,
                              double budget_s) {
  cfg.governor = std::make_shared<slo::SloGovernor>(model, slo::GovernorConfig{0, 0, cfg.max_num_seqs, false});
  cfg.prefix_caching = false;
  cfg.kv_events = nullptr;
  cfg.kv_tiers = nullptr;
  cfg.remote_prefill = nullptr;
  cfg.speculative = SpeculativeMode::kOff;
  cfg.draft_model = nullptr;
  Engine engine(m.model, m.tokenizer, cfg);
  Calibration out;
  out.kv_tokens = engine.memory_plan().n_tokens;
  out.kv_bytes = int64_t(engine.memory_plan().n_blocks) * engine.memory_plan().bytes_per_block;
  const auto start = Clock::now();
  Burst burst(engine, start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget_s)), m.model.spec.n_vocab);
  auto since = [&](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  auto progress = [&](const char* phase, bool done) {
    log_info("slo: calibrating (at most {:.0f} s): {}{}, {:.1f} s", budget_s, phase, done ? "" : " (out of time)", since(start));
  };
  bool on_time = true;
  // A warm-up (the first steps page the weights in and set up the kernels); its speed sizes the rest.
  const int64_t warm = std::min<int64_t>(256, cfg.max_batched_tokens);
  burst.submit(warm, 2);
  on_time = burst.run();
  progress("warm-up", on_time);
  const double rate = double(warm) / std::max(since(start), 1e-3);  // prompt tokens per second, pessimistic
  auto afford = [&](int64_t tokens, double share) {  // a prompt that takes about `share` of the budget at most
    return std::clamp<int64_t>(int64_t(rate * share * budget_s), 32, std::max<int64_t>(tokens, 32));
  };
  model->forget();
  // One stream decoding at the design context: what the plan's floor of one stream stands on.
  if (on_time) {
    const int64_t context = afford(design_context, 0.35);
    bool first = false;
    std::vector<double> steps;
    burst.submit(context, 24, &first);
    on_time = burst.run(&steps, &first);
    if (steps.size() > 4) steps.erase(steps.begin());  // the step after the first token may still hold prompt work
    if (!steps.empty()) out.one_stream_s = median(steps), out.one_stream_context = context;
    progress("one stream decoding", on_time);
  }
  // A crowd of short ones with a long one among them (batched decodes, mixed steps).
  if (on_time) {
    const int32_t crowd = std::min<int32_t>(cfg.max_num_seqs, 24);
    for (int32_t i = 0; i < crowd; ++i) burst.submit(16 + 4 * i, 12 + (i % 5));
    burst.submit(afford(std::min<int64_t>(1024, engine.n_ctx() / 2), 0.1), 6);
    on_time = burst.run();
    progress("a crowd", on_time);
  }
  // Long prompts alone (prefill-only steps); last, as the decodes matter most to an ITL objective.
  if (on_time) {
    for (int64_t n : {cfg.max_batched_tokens, cfg.max_batched_tokens / 4, int64_t(64)}) {
      burst.submit(afford(n, 0.12), 2);
      if (!(on_time = burst.run())) break;
    }
    progress("prompts alone", on_time);
  }
  const size_t dropped = model->reject_outliers();
  const double fit = model->fit_error(), prior = model->error_with(model->prior());
  log_info("slo: calibrated the step model on {} steps in {:.1f} s ({} outliers dropped; fit error {:.0f}%, uncalibrated {:.0f}%)",
           model->observations(), since(start), dropped, 100 * fit, 100 * prior);
  if (prior < fit) {
    model->use_prior();
    log_info("slo: the fit is worse than the planner's uncalibrated model: planning with that");
  }
  if (out.one_stream_s > 0)
    log_info("slo: one stream at context {} decodes in {:.1f} ms (the model predicts {:.1f} ms)", out.one_stream_context,
             1e3 * out.one_stream_s, 1e3 * model->predict(std::vector<plan::RunShape>{plan::RunShape{out.one_stream_context, 1, 1}}));
  return out;
}

}  // namespace

void add_slo_options(CLI::App* cmd, SloCliOptions& o) {
  cmd->add_option("--slo", o.slo,
                  "latency objectives, e.g. ttft=1s,itl=40ms[,e2e=10s]: the engine picks --max-num-seqs, "
                  "--max-batched-tokens and --prefill-chunk for them (flags given still win), holds each step that "
                  "decodes to the ITL bound and counts goodput")
      ->type_name("SPEC");
  cmd->add_flag("--slo-reject", o.reject,
                "refuse (503 with Retry-After) a request whose predicted time to first token is already past the TTFT objective");
  cmd->add_flag("--no-preemption-guard", o.no_preemption_guard,
                "keep the running-request limit when preemptions cascade (the guard lowers it until the KV pool holds them)");
  cmd->add_flag("--slo-no-calibration", o.no_calibration_burst,
                "skip the short calibration burst at start-up (the step model then learns from live traffic only)");
  cmd->add_option("--slo-calibration-seconds", o.calibration_seconds,
                  "most seconds the start-up calibration burst may take (it stops and plans from what it saw)")
      ->capture_default_str();
  cmd->add_option("--probe-profile", o.profile, "machine profile of `ridge probe` (default $RIDGE_HOME/machine.json)");
}

plan::HardwareSpec step_model_hardware(const std::string& profile, int threads) {
  const std::string path = profile.empty() ? plan::default_probe_profile_path() : profile;
  if (std::filesystem::exists(path)) return plan::hardware_from_probe_profile(path, threads);
  plan::HardwareSpec hw;  // the fit absorbs the scale; the roofline fractions are not meaningful
  hw.name = "this machine (not probed)";
  hw.kind = "cpu";
  hw.source = "placeholder";
  hw.memory_bw = 20e9;
  hw.peak_f32 = 5e11;
  hw.peak_int8 = 2e12;
  hw.peak_bf16 = 1e12;
  return hw;
}

void setup_slo(const SloCliOptions& o, const EngineCliOptions& eo, const LoadedModel& m, EngineConfig& cfg) {
  if (cfg.parallel || cfg.device == Device::Cuda) {
    if (!o.slo.empty()) log_warning("slo: --slo plans one CPU process; this engine runs without it");
    return;
  }
  const int threads = default_threads(cfg.n_threads);
  const plan::HardwareSpec hw = step_model_hardware(o.profile, threads);
  if (hw.source == "placeholder")
    log_warning("slo: no probe profile (run `ridge probe`): step roofline fractions in /metrics are against placeholders");
  plan::Overheads calibration;
  if (auto c = plan::load_calibration(plan::default_calibration_path())) calibration = *c;
  auto model = std::make_shared<slo::StepModel>(
      plan::RaggedCostModel(m.model.spec, plan::engine_precision(m.model), hw), calibration);
  slo::GovernorConfig g;
  g.max_num_seqs = cfg.max_num_seqs;
  g.preemption_guard = !o.no_preemption_guard;
  if (!o.slo.empty()) {
    const loadgen::Slo slo = loadgen::parse_slo(o.slo);
    slo::SloPlanInputs in;
    in.slo = slo;
    in.n_ctx = cfg.n_ctx > 0 ? cfg.n_ctx : m.model.spec.n_ctx_train;
    const int64_t design_context = std::min<int64_t>(1024, std::max<int64_t>(in.n_ctx, 2) / 2);  // as plan_for_slo picks it
    Calibration cal;
    EngineConfig burst = cfg;
    burst.max_batched_tokens = std::max<int64_t>(cfg.max_batched_tokens, 1024);
    if (!o.no_calibration_burst) cal = calibration_burst(m, burst, model, design_context, std::clamp(o.calibration_seconds, 1.0, 60.0));
    const int64_t kv_bytes = cal.kv_bytes;
    in.kv_tokens = cal.kv_tokens;
    // Decoding at three quarters of the design context or more costs about what it costs there.
    if (4 * cal.one_stream_context >= 3 * design_context) in.measured_one_stream_s = cal.one_stream_s;
    if (eo.max_batched_tokens_flag && eo.max_batched_tokens_flag->count()) in.max_batched_tokens = cfg.max_batched_tokens;
    const slo::SloPlan plan = slo::plan_for_slo(*model, in);
    log_info("slo: {}", slo::describe(plan));
    auto given = [](CLI::Option* f) { return f && f->count() > 0; };
    if (!given(eo.max_num_seqs_flag)) cfg.max_num_seqs = plan.max_num_seqs;
    if (!given(eo.max_batched_tokens_flag)) cfg.max_batched_tokens = plan.max_batched_tokens;
    if (!given(eo.prefill_chunk_flag)) cfg.prefill_chunk = plan.prefill_chunk;
    if (cfg.kv_memory_bytes == 0 && kv_bytes > 0) cfg.kv_memory_bytes = kv_bytes;  // the pool the plan counted
    g.step_bound_s = plan.step_bound_s;
    g.decode_bound_s = plan.decode_bound_s;
    g.max_num_seqs = cfg.max_num_seqs;
    cfg.slo_ttft_s = plan.ttft_s;
    cfg.slo_reject = o.reject;
  } else if (o.reject) {
    log_warning("slo: --slo-reject needs --slo with a ttft objective; ignored");
  }
  cfg.governor = std::make_shared<slo::SloGovernor>(model, g);
}

}  // namespace ridge::cli
