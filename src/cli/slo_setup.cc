#include "cli/slo_setup.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "cli/parallel_options.h"
#include "plan/validate.h"

namespace ridge::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Prompts and decodes of several sizes, run through a throwaway engine so the step model sees
// prefill chunks, batched decodes and mixed steps of this engine before the first client does.
void calibration_burst(const LoadedModel& m, EngineConfig cfg, std::shared_ptr<slo::StepModel> model, int64_t& kv_tokens,
                       int64_t& kv_bytes) {
  cfg.governor = std::make_shared<slo::SloGovernor>(model, slo::GovernorConfig{0, 0, cfg.max_num_seqs, false});
  cfg.prefix_caching = false;
  cfg.kv_events = nullptr;
  cfg.kv_tiers = nullptr;
  cfg.remote_prefill = nullptr;
  cfg.speculative = SpeculativeMode::kOff;
  cfg.draft_model = nullptr;
  Engine engine(m.model, m.tokenizer, cfg);
  kv_tokens = engine.memory_plan().n_tokens;
  kv_bytes = int64_t(engine.memory_plan().n_blocks) * engine.memory_plan().bytes_per_block;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> token(0, m.model.spec.n_vocab - 1);
  auto submit = [&](int64_t prompt, int32_t output) {
    RequestOptions r;
    prompt = std::min<int64_t>(prompt, engine.n_ctx() - output - 1);
    for (int64_t i = 0; i < prompt; ++i) r.prompt.push_back(token(rng));
    r.max_tokens = output;
    r.ignore_eos = true;
    engine.submit(std::move(r), [](const TokenEvent&) {});
  };
  const auto start = Clock::now();
  // A warm-up (the first steps page the weights in and set up the kernels), then long prompts
  // alone (prefill-only steps), then a crowd of short ones with a long one among them.
  submit(cfg.max_batched_tokens, 2);
  engine.run_until_idle();
  model->forget();
  submit(cfg.max_batched_tokens, 2);
  engine.run_until_idle();
  submit(std::max<int64_t>(64, cfg.max_batched_tokens / 4), 2);
  engine.run_until_idle();
  const int32_t crowd = std::min<int32_t>(cfg.max_num_seqs, 24);
  for (int32_t i = 0; i < crowd; ++i) submit(16 + 8 * i, 12 + (i % 5));
  submit(std::min<int64_t>(1024, engine.n_ctx() / 2), 6);
  engine.run_until_idle();
  std::fprintf(stderr, "slo: calibrated the step model on %lld steps in %.1f s (mean error %.0f%%)\n",
               (long long)model->observations(), std::chrono::duration<double>(Clock::now() - start).count(),
               100 * model->mean_relative_error());
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
    if (!o.slo.empty()) std::fprintf(stderr, "slo: --slo plans one CPU process; this engine runs without it\n");
    return;
  }
  const int threads = default_threads(cfg.n_threads);
  const plan::HardwareSpec hw = step_model_hardware(o.profile, threads);
  if (hw.source == "placeholder")
    std::fprintf(stderr, "slo: no probe profile (run `ridge probe`): step roofline fractions in /metrics are against placeholders\n");
  plan::Overheads calibration;
  if (auto c = plan::load_calibration(plan::default_calibration_path())) calibration = *c;
  auto model = std::make_shared<slo::StepModel>(
      plan::RaggedCostModel(m.model.spec, plan::engine_precision(m.model), hw), calibration);
  slo::GovernorConfig g;
  g.max_num_seqs = cfg.max_num_seqs;
  g.preemption_guard = !o.no_preemption_guard;
  if (!o.slo.empty()) {
    const loadgen::Slo slo = loadgen::parse_slo(o.slo);
    int64_t kv_tokens = 0, kv_bytes = 0;
    EngineConfig burst = cfg;
    burst.max_batched_tokens = std::max<int64_t>(cfg.max_batched_tokens, 1024);
    if (!o.no_calibration_burst) calibration_burst(m, burst, model, kv_tokens, kv_bytes);
    slo::SloPlanInputs in;
    in.slo = slo;
    in.n_ctx = cfg.n_ctx > 0 ? cfg.n_ctx : m.model.spec.n_ctx_train;
    in.kv_tokens = kv_tokens;
    if (eo.max_batched_tokens_flag && eo.max_batched_tokens_flag->count()) in.max_batched_tokens = cfg.max_batched_tokens;
    const slo::SloPlan plan = slo::plan_for_slo(*model, in);
    std::fprintf(stderr, "slo: %s", slo::describe(plan).c_str());
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
    std::fprintf(stderr, "slo: --slo-reject needs --slo with a ttft objective; ignored\n");
  }
  cfg.governor = std::make_shared<slo::SloGovernor>(model, g);
}

}  // namespace ridge::cli
