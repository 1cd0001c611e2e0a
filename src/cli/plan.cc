// ridge plan MODEL: the roofline planner. Predicts what inference of a model can reach on a piece of
// hardware (a datasheet GPU, a user entry, or this machine's CPU from `ridge probe`), section by
// section: machine balance, decode versus batch, KV ledger, prefill, per-op roofline, cost, SLO,
// quantization, parallelism, MoE, disaggregation, speculative decoding, GEMM shapes.
// --json for machines, --svg for a roofline plot, --validate to measure the engine on this machine
// (under mpirun with --tp / --pp: the split, against the parallel section's prediction).
#include <omp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/parallel_options.h"
#include "core/error.h"
#include "dist/lockstep.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "plan/model_catalog.h"
#include "plan/plan_report.h"
#include "plan/table.h"
#include "plan/validate.h"
#include "slo/slo_plan.h"

namespace ridge::cli {
namespace {

using namespace ridge::plan;

struct PlanArgs {
  std::string model = "llama-3-70b";
  std::string hardware = "H100 SXM";
  std::string hardware_file;
  std::string profile;
  int threads = 0;
  std::string weights, embeddings, kv, act;
  PlanOptions options;
  std::vector<std::string> sections;
  double slo_ms = 40;
  double price = -1;
  bool json = false;
  std::string svg;
  bool list = false;
  bool validate = false;
  ValidateOptions validate_options;
  std::string tp_mode = "gather";  // --validate under a split: how the TP ranks combine (cli/parallel_options.h)
  bool save_calibration = false;
  bool no_calibration = false;
  std::string slo;  // --slo ttft=1s,itl=40ms: size the engine for it
  std::string kv_pool;  // --kv-pool 8GiB: each rank's KV budget for the capacity columns
};

// `ridge plan MODEL --slo ...`: what `ridge serve --slo` would choose, from the cost model and the
// calibration alone (serve then refits it on its own measured steps).
void print_slo_plan(const PlanInputs& in, const PlanArgs& a, nlohmann::json* json) {
  slo::StepModel model(RaggedCostModel(in.spec, in.precision, in.hw), in.overheads);
  slo::SloPlanInputs s;
  s.slo = loadgen::parse_slo(a.slo);
  s.n_ctx = in.spec.n_ctx_train > 0 ? in.spec.n_ctx_train : 4096;
  const KvLedger ledger = kv_ledger(in, 1);
  s.kv_tokens = ledger.bytes_per_token > 0 ? int64_t(ledger.free_bytes / ledger.bytes_per_token) : 0;
  const slo::SloPlan p = slo::plan_for_slo(model, s);
  if (json) {
    nlohmann::json caps = nlohmann::json::array();
    for (const slo::ContextCapacity& c : p.capacity)
      caps.push_back({{"context", c.context}, {"by_latency", c.by_latency}, {"by_memory", c.by_memory}, {"streams", c.streams()}});
    (*json)["slo_plan"] = {{"slo", s.slo.describe()}, {"max_num_seqs", p.max_num_seqs}, {"max_batched_tokens", p.max_batched_tokens},
                           {"prefill_chunk", p.prefill_chunk}, {"step_bound_s", p.step_bound_s}, {"decode_bound_s", p.decode_bound_s},
                           {"design_context", p.design_context}, {"design_streams", p.design_streams}, {"capacity", caps},
                           {"max_prompt_idle", p.max_prompt_idle}, {"max_prompt_loaded", p.max_prompt_loaded}, {"notes", p.notes}};
    return;
  }
  std::printf("\n## Sized for %s (the KV pool: all memory after the weights)\n%s", s.slo.describe().c_str(), slo::describe(p).c_str());
}

std::vector<HardwareSpec> user_hardware(const PlanArgs& a) {
  std::vector<HardwareSpec> out;
  if (!a.hardware_file.empty()) out = read_hardware_file(a.hardware_file);
  const std::string home_file = ridge_home() + "/hardware.json";
  if (a.hardware_file.empty() && std::filesystem::exists(home_file)) out = read_hardware_file(home_file);
  return out;
}

std::string profile_path(const PlanArgs& a) { return a.profile.empty() ? default_probe_profile_path() : a.profile; }

HardwareSpec local_cpu(const PlanArgs& a) {
  const int threads = a.threads > 0 ? a.threads : omp_get_max_threads();
  return hardware_from_probe_profile(profile_path(a), threads);
}

bool is_local(const std::string& name) { return name == "local" || name == "cpu" || name == "this"; }

void print_lists(const PlanArgs& a) {
  std::printf("models (named shapes):");
  for (const auto& n : named_model_names()) std::printf(" %s", n.c_str());
  std::printf("\nhardware:");
  for (const auto& h : user_hardware(a)) std::printf(" '%s'", h.name.c_str());
  for (const auto& h : datasheet_hardware()) std::printf(" '%s'", h.name.c_str());
  std::printf(" local (ridge probe)\nformats:");
  for (const auto& f : number_format_names()) std::printf(" %s", f.c_str());
  std::printf(" (and GGUF types: q4_0, q4_k, q8_0, ...)\nsections:");
  for (const auto& s : plan_section_names()) std::printf(" %s", s.c_str());
  std::printf("\n");
}

// mpirun -np TP*PP ridge plan MODEL --validate --tp TP --pp PP: every rank loads its shard; rank 0
// measures the split and reports, the others serve its steps and print nothing.
void run_split_validate(const PlanArgs& a, const ParallelCliOptions& split, dist::Parallel& parallel) {
  if (a.save_calibration) fail("--save-calibration fits one process: run --validate without --tp / --pp");
  const auto shard = shard_request(&parallel, split);
  const int threads = default_threads(a.threads);
  const std::string path = resolve_model_path(a.model);
  if (!parallel.is_driver()) return dist::run_worker(load_model(path, shard.get()), threads, parallel);
  const HardwareSpec host = split_host(profile_path(a), threads, parallel.sizes.world());
  const SplitValidateResult r =
      validate_split_on_this_machine(path, host, a.validate_options, {&parallel, shard.get(), threads, a.tp_mode});
  if (!a.json) {
    std::fputs(split_validate_report(r).c_str(), stdout);
    return;
  }
  const ParallelDecode& p = r.predicted;
  const nlohmann::json j = {
      {"model", r.inputs.spec.name}, {"cpu", host.name}, {"threads", host.threads},
      {"split", {{"tp", r.plan.tp}, {"pp", r.plan.pp}, {"ranks", r.plan.devices()}, {"threads_per_rank", threads},
                 {"tp_mode", a.tp_mode}}},
      {"prefill", {{"tokens", r.options.prompt}, {"measured_s", r.prefill_measured_s},
                   {"measured_tok_s", double(r.options.prompt) / r.prefill_measured_s}}},
      {"decode", {{"steps", r.options.decode}, {"context", p.context}, {"predicted_s", r.decode.predicted_s},
                  {"measured_s", r.decode.measured_s}, {"ratio", r.decode.ratio()}, {"predicted_tok_s", p.tok_s_total()},
                  {"measured_tok_s", 1 / r.decode.measured_s}, {"predicted_stage_s", p.stage_s}, {"predicted_comm_s", p.comm_s}}},
      {"comm", {{"measured", r.comm.measured}, {"transport", r.comm.measured ? r.comm.transport : "generic"},
                {"shares_host", r.comm.shares_host}}}};
  std::printf("%s\n", j.dump(2).c_str());
}

void run_validate(const PlanArgs& a) {
  const ParallelPlan& layout = a.options.parallel;
  if (layout.ep > 1) fail("--validate splits by --tp and --pp; --ep is planned but not validated");
  ParallelCliOptions split;
  split.tp = int(layout.tp);
  split.pp = int(layout.pp);
  split.helix = int(layout.kvp);
  split.tp_mode = a.tp_mode;
  if (dist::Parallel* parallel = parallel_for(split)) return run_split_validate(a, split, *parallel);
  const HardwareSpec cpu = local_cpu(a);
  const ValidateResult r = validate_on_this_machine(resolve_model_path(a.model), cpu, a.validate_options);
  if (a.save_calibration) save_calibration(r, default_calibration_path());
  if (a.json) {
    const nlohmann::json j = {
        {"model", r.inputs.spec.name}, {"cpu", cpu.name}, {"threads", cpu.threads},
        {"prefill", {{"tokens", r.options.prompt}, {"predicted_s", r.prefill.predicted_s}, {"measured_s", r.prefill.measured_s},
                     {"ratio", r.prefill.ratio()}}},
        {"decode", {{"steps", r.options.decode}, {"predicted_s", r.decode.predicted_s}, {"measured_s", r.decode.measured_s},
                    {"ratio", r.decode.ratio()}}},
        {"fitted_overheads", {{"per_step_s", r.fitted.per_step_s}, {"per_token_s", r.fitted.per_token_s}}}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::fputs(validate_report(r).c_str(), stdout);
  if (a.save_calibration) std::printf("saved the fitted overheads to %s\n", default_calibration_path().c_str());
}

// --helix N names the tensor-parallel group it shards, as on the engine's commands.
void resolve_helix(ParallelPlan& p) {
  p.tp = helix_tp_size(int(p.tp), int(p.kvp));
  check_parallel_plan(p);
}

void run_plan(PlanArgs a) {
  if (a.list) return print_lists(a);
  resolve_helix(a.options.parallel);
  if (a.validate) return run_validate(a);
  const PlanModel model = resolve_plan_model(a.model);
  PlanInputs in;
  in.spec = model.spec;
  const bool local = is_local(a.hardware);
  in.hw = local ? local_cpu(a) : find_hardware(a.hardware, user_hardware(a));
  // Defaults: the file's own types; else BF16 on a GPU, and what the engine runs on a CPU.
  if (model.precision) in.precision = *model.precision;
  if (!model.precision && in.hw.kind == "cpu") in.precision.kv = in.precision.activations = number_format("f32");
  if (!a.weights.empty()) in.precision.weights = number_format(a.weights);
  in.precision.embeddings = a.embeddings.empty() ? (a.weights.empty() ? in.precision.embeddings : in.precision.weights)
                                                 : number_format(a.embeddings);
  if (!a.kv.empty()) in.precision.kv = number_format(a.kv);
  if (!a.act.empty()) in.precision.activations = number_format(a.act);
  if (local && !a.no_calibration)
    if (auto o = load_calibration(default_calibration_path())) in.overheads = *o;

  PlanOptions& o = a.options;
  o.itl_slo_s = a.slo_ms / 1000.0;
  o.traffic.itl_slo_s = o.itl_slo_s;
  o.traffic.prompt_tokens = o.prompt;
  if (a.price >= 0) o.price_per_hour = a.price;
  for (const auto& s : a.sections) {
    if (std::find(plan_section_names().begin(), plan_section_names().end(), s) == plan_section_names().end())
      fail("unknown section '{}' (see ridge plan --list)", s);
    o.sections.insert(s);
  }
  if (o.batches.empty()) fail("--batch needs at least one batch size");
  for (int64_t b : o.batches)
    if (b < 1) fail("--batch sizes must be positive, got {}", b);
  if (o.context < 0 || o.prompt < 1) fail("--context must be >= 0 and --prompt >= 1");
  if (!a.kv_pool.empty()) o.kv_pool_bytes = double(parse_bytes(a.kv_pool));

  const PlanReport report = build_plan_report(in, model, o);
  if (!a.svg.empty()) {
    std::ofstream svg(a.svg);
    if (!svg) fail("cannot write {}", a.svg);
    svg << roofline_svg(in.hw, roofline_points(in, o), fmt::format("{} on {}", in.spec.name, in.hw.name));
  }
  if (a.json) {
    nlohmann::json j = report.json;
    if (!a.slo.empty()) print_slo_plan(in, a, &j);
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::fputs(report.text.c_str(), stdout);
  if (!a.slo.empty()) print_slo_plan(in, a, nullptr);
  if (in.overheads.per_step_s > 0 || in.overheads.per_token_s > 0)
    std::printf("(includes overheads learned by --validate: %s per step, %s per token; --no-calibration to drop them)\n",
                format_seconds(in.overheads.per_step_s).c_str(), format_seconds(in.overheads.per_token_s).c_str());
  if (!a.svg.empty()) std::printf("roofline plot written to %s\n", a.svg.c_str());
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Roofline planner: predict throughput ceilings of a model on hardware");
  auto a = std::make_shared<PlanArgs>();
  auto& o = a->options;
  cmd->add_option("model", a->model, "named shape (see --list), GGUF file, 'default', config.json, or checkpoint dir")
      ->capture_default_str();
  cmd->add_option("--hw", a->hardware, "hardware: H100, H200, B200, GB300, a user entry, or 'local' (ridge probe)")
      ->capture_default_str();
  cmd->add_option("--hardware-file", a->hardware_file, "JSON file of extra hardware entries (default $RIDGE_HOME/hardware.json)");
  cmd->add_option("--profile", a->profile, "probe profile for --hw local (default $RIDGE_HOME/machine.json)");
  cmd->add_option("-t,--threads", a->threads, "CPU threads: which probe measurements to use (default: all cores)");
  cmd->add_option("--weights", a->weights, "weight format: bf16, fp8, int8, int4, fp4, nvfp4, mxfp4, or a GGUF type");
  cmd->add_option("--embeddings", a->embeddings, "embedding / output head format (default: as --weights)");
  cmd->add_option("--kv", a->kv, "KV cache format (default bf16; f32 on a CPU)");
  cmd->add_option("--act", a->act, "activation format (default bf16; f32 on a CPU)");
  cmd->add_option("-c,--context", o.context, "cached tokens per sequence while decoding")->capture_default_str();
  cmd->add_option("-b,--batch", o.batches, "batch sizes (comma-separated)")->delimiter(',')->capture_default_str();
  cmd->add_option("-p,--prompt", o.prompt, "prompt tokens for prefill / TTFT")->capture_default_str();
  cmd->add_option("--slo-ms", a->slo_ms, "inter-token latency SLO in ms")->capture_default_str();
  cmd->add_option("--slo", a->slo,
                  "size the engine for these objectives (ttft=1s,itl=40ms): running streams per context, prefill chunk, "
                  "longest prompt within TTFT (what `ridge serve --slo` chooses before it refits on measured steps)")
      ->type_name("SPEC");
  cmd->add_option("--price", a->price, "USD per device-hour (enables the cost section)");
  cmd->add_option("--tp", o.parallel.tp, "tensor-parallel degree of an extra plan to evaluate");
  cmd->add_option("--pp", o.parallel.pp, "pipeline-parallel degree");
  cmd->add_option("--ep", o.parallel.ep, "expert-parallel degree");
  cmd->add_option("--helix", o.parallel.kvp,
                  "Helix: KV-parallel size, the tensor-parallel group (--tp defaults to it); compares one process, TP N and "
                  "Helix N at --context")
      ->type_name("N");
  cmd->add_option("--kv-pool", a->kv_pool, "each rank's KV budget for the capacity columns (512MiB, 8GiB; default: memory after weights)")
      ->type_name("SIZE");
  cmd->add_option("--rps", o.traffic.requests_per_s, "requests per second for pool sizing")->capture_default_str();
  cmd->add_option("--output-tokens", o.traffic.output_tokens, "output tokens per request")->capture_default_str();
  cmd->add_option("--spec-k", o.speculative.draft_tokens, "speculative draft tokens per round")->capture_default_str();
  cmd->add_option("--spec-accept", o.speculative.acceptance, "draft token acceptance rate")->capture_default_str();
  cmd->add_option("--spec-draft-cost", o.speculative.draft_cost, "draft step time / target step time")->capture_default_str();
  cmd->add_option("--gemm-m", o.gemm_tokens, "GEMM-M (tokens) for the GEMM shape table (default: --prompt)");
  cmd->add_option("--quant", o.quant_formats, "formats of the quantization table")->delimiter(',');
  cmd->add_option("-s,--section", a->sections, "sections to print (comma-separated; default all)")->delimiter(',');
  cmd->add_flag("--json", a->json, "print JSON instead of tables");
  cmd->add_option("--svg", a->svg, "write a roofline plot (SVG) to this path");
  cmd->add_flag("--list", a->list, "list named models, hardware, formats and sections");
  cmd->add_flag("--validate", a->validate, "run MODEL (a GGUF / checkpoint) here and compare with the prediction");
  cmd->add_option("--validate-prompt", a->validate_options.prompt, "prefill tokens for --validate")->capture_default_str();
  cmd->add_option("--validate-decode", a->validate_options.decode, "decode steps for --validate")->capture_default_str();
  cmd->add_option("--tp-mode", a->tp_mode, "with --validate --tp under mpirun: gather or reduce (as ridge run --tp-mode)")
      ->capture_default_str();
  cmd->add_flag("--save-calibration", a->save_calibration, "with --validate: keep the fitted overheads for later local plans");
  cmd->add_flag("--no-calibration", a->no_calibration, "ignore overheads saved by --validate --save-calibration");
  cmd->callback([a] { run_plan(*a); });
}

}  // namespace ridge::cli
