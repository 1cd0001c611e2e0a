#include "plan/validate.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/device.h"
#include "backend/paged_forward.h"
#include "core/error.h"
#include "dist/world.h"
#include "model/forward.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "plan/hardware.h"
#include "plan/model_source.h"
#include "plan/table.h"

namespace ridge::plan {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<int32_t> probe_tokens(int64_t n, int64_t n_vocab, int64_t seed) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = int32_t((seed + i * 7919) % n_vocab);
  return out;
}

}  // namespace

Precision engine_precision(const Model& model) {
  double bytes = 0, elements = 0;
  DType top = DType::F32;
  double top_bytes = -1;
  for (const auto& layer : model.weights.layers) {
    for (const WeightRef* w : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w_gate, &layer.w_up, &layer.w_down}) {
      const double b = double(w->row_bytes()) * double(w->rows);
      bytes += b;
      elements += double(w->rows) * double(w->cols);
      if (b > top_bytes) top_bytes = b, top = w->type;
    }
  }
  Precision p;
  p.weights = number_format_from_dtype(top);
  if (elements > 0) p.weights.bits = 8.0 * bytes / elements;
  p.embeddings = number_format_from_dtype(model.weights.output.type);
  p.kv = number_format("fp16");
  p.activations = number_format("f32");
  return p;
}

Overheads fit_overheads(const Measured& prefill, int64_t prompt, const Measured& decode) {
  // measured = predicted + per_step + per_token x tokens, for the prefill (prompt tokens) and a decode step (1).
  const double gap_p = prefill.measured_s - prefill.predicted_s;
  const double gap_d = decode.measured_s - decode.predicted_s;
  Overheads o;
  if (prompt > 1) o.per_token_s = (gap_p - gap_d) / double(prompt - 1);
  o.per_step_s = gap_d - o.per_token_s;
  if (o.per_token_s < 0) o.per_token_s = 0, o.per_step_s = gap_d;
  if (o.per_step_s < 0) o.per_step_s = 0, o.per_token_s = std::max(0.0, gap_p / double(prompt));
  o.per_step_s = std::max(0.0, o.per_step_s);
  return o;
}

ValidateResult validate_on_this_machine(const std::string& model_path, const HardwareSpec& cpu, const ValidateOptions& options) {
  if (options.prompt < 2 || options.decode < 1) fail("--validate needs a prompt of at least 2 tokens and 1 decode step");
  const Model model = load_model(model_path);
  ValidateResult r;
  r.options = options;
  r.inputs.spec = model.spec;
  r.inputs.precision = engine_precision(model);
  r.inputs.hw = cpu;

  ModelForward forward(model, int(cpu.threads));  // the threads the prediction prices
  std::vector<float> logits;
  KvCache cache = forward.make_cache(options.prompt + options.decode + 1);
  // Warm-up: page the weights in and size the buffers, so the timings see steady state.
  forward.forward(probe_tokens(std::min<int64_t>(8, options.prompt), model.spec.n_vocab, 1), cache, false, logits);
  cache.clear();

  const auto prompt = probe_tokens(options.prompt, model.spec.n_vocab, 11);
  auto start = Clock::now();
  forward.forward(prompt, cache, false, logits, /*prompt=*/true);
  r.prefill.measured_s = seconds_since(start);

  const auto next = probe_tokens(options.decode, model.spec.n_vocab, 29);
  start = Clock::now();
  for (int64_t i = 0; i < options.decode; ++i) forward.forward(std::span(&next[size_t(i)], 1), cache, false, logits);
  r.decode.measured_s = seconds_since(start) / double(options.decode);

  r.prefill_cost = prefill_point(r.inputs, options.prompt).cost;
  r.prefill.predicted_s = step_time(r.prefill_cost, cpu).seconds;
  // Decode steps run at contexts prompt .. prompt + decode - 1: predict at the middle one.
  const DecodePoint d = decode_point(r.inputs, 1, options.prompt + options.decode / 2);
  r.decode_cost = d.cost;
  r.decode.predicted_s = d.time.seconds;
  r.fitted = fit_overheads(r.prefill, options.prompt, r.decode);
  return r;
}

HardwareSpec split_host(const std::string& profile_path, int threads_per_rank, int ranks) {
  const HardwareSpec one_rank = hardware_from_probe_profile(profile_path, threads_per_rank);
  if (!plan_comm_model(one_rank).shares_host) return one_rank;
  return hardware_from_probe_profile(profile_path, int64_t(threads_per_rank) * ranks);
}

SplitValidateResult validate_split_on_this_machine(const std::string& model_path, const HardwareSpec& host,
                                                   const ValidateOptions& options, const SplitRun& run) {
  if (options.prompt < 2 || options.decode < 1) fail("--validate needs a prompt of at least 2 tokens and 1 decode step");
  if (!run.parallel || !run.parallel->distributed() || !run.parallel->is_driver() || !run.shard)
    fail("validate_split_on_this_machine runs on world rank 0 of a split job");
  const Model model = load_model(model_path, run.shard);
  SplitValidateResult r;
  r.options = options;
  r.run = run;
  r.plan = {run.parallel->sizes.tp, run.parallel->sizes.pp, 1, run.parallel->sizes.kvp};
  r.inputs.spec = model.spec;  // whole: a shard keeps the full spec
  r.inputs.precision = engine_precision(model);
  // Rank 0 is the first stage: under PP another rank holds the output head, so read its type from the file.
  if (!model.weights.output.present())
    if (const auto file = resolve_plan_model(model_path).precision) r.inputs.precision.embeddings = file->embeddings;
  r.inputs.hw = host;

  {
    // One sequence whose block table covers the prompt and every decode step.
    PagedForwardConfig c;
    c.n_threads = run.threads_per_rank;
    c.n_ctx = options.prompt + options.decode + 1;
    c.block_size = dist::default_kv_block_size(int(r.plan.kvp));
    c.n_blocks = int32_t((c.n_ctx + c.block_size - 1) / c.block_size);
    c.parallel = run.parallel;
    const std::unique_ptr<PagedForward> forward = make_paged_forward(model, c);  // sends the workers the pool's shape
    std::vector<BlockId> blocks(size_t(c.n_blocks));
    for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = BlockId(b);
    std::vector<float> logits;
    auto pass = [&](std::span<const int32_t> tokens, int64_t position, bool prompt = false) {
      const int64_t prompt_end = prompt ? position + int64_t(tokens.size()) : 0;
      const SequenceRun seq{int64_t(tokens.size()), position, blocks, LogitsWanted::Last, prompt_end};
      forward->forward(TokenBatch{tokens, std::span(&seq, 1)}, logits);
    };
    // Warm-up, as in one process; the prompt then overwrites its KV from position 0.
    pass(probe_tokens(std::min<int64_t>(8, options.prompt), model.spec.n_vocab, 1), 0);

    const auto prompt = probe_tokens(options.prompt, model.spec.n_vocab, 11);
    auto start = Clock::now();
    pass(prompt, 0, /*prompt=*/true);
    r.prefill_measured_s = seconds_since(start);

    const auto next = probe_tokens(options.decode, model.spec.n_vocab, 29);
    start = Clock::now();
    for (int64_t i = 0; i < options.decode; ++i) pass(std::span(&next[size_t(i)], 1), options.prompt + i);
    r.decode.measured_s = seconds_since(start) / double(options.decode);
  }  // the forward's end stops the workers

  // The plan's parallel section at batch 1, at the middle decode step's context.
  r.comm = plan_comm_model(host);
  r.predicted = parallel_decode(r.inputs, r.plan, 1, options.prompt + options.decode / 2);
  r.decode.predicted_s = r.predicted.step_s;
  return r;
}

std::string split_validate_report(const SplitValidateResult& r) {
  const HardwareSpec& hw = r.inputs.hw;
  std::string out = fmt::format("## Predicted vs measured, split TP={} x PP={} over {} ranks ({} thread{} each, --tp-mode {}): ",
                                r.plan.tp, r.plan.pp, r.plan.devices(), r.run.threads_per_rank,
                                r.run.threads_per_rank == 1 ? "" : "s", r.run.tp_mode);
  out += fmt::format("{} on {} ({})\n", r.inputs.spec.name.empty() ? r.inputs.spec.arch : r.inputs.spec.name, hw.name, hw.note);
  out += fmt::format("  formats: weights {} ({:.2f} bits), head {}, KV {}, activations {}\n", r.inputs.precision.weights.name,
                     r.inputs.precision.weights.bits, r.inputs.precision.embeddings.name, r.inputs.precision.kv.name,
                     r.inputs.precision.activations.name);
  TextTable t({"phase", "predicted", "measured", "measured/predicted", "predicted tok/s", "measured tok/s"});
  const double n = double(r.options.prompt);
  t.add_row({fmt::format("prefill {} tokens", r.options.prompt), "-", format_seconds(r.prefill_measured_s), "-", "-",
             format_number(n / r.prefill_measured_s)});
  t.add_row({fmt::format("decode step (x{})", r.options.decode), format_seconds(r.decode.predicted_s),
             format_seconds(r.decode.measured_s), format_number(r.decode.ratio()), format_number(1 / r.decode.predicted_s),
             format_number(1 / r.decode.measured_s)});
  out += t.render();
  const ParallelDecode& p = r.predicted;
  out += fmt::format("  predicted step = {} stage{} x {} roofline per rank + {} communication", r.plan.pp,
                     r.plan.pp == 1 ? "" : "s", format_seconds(p.stage_s), format_seconds(p.comm_s));
  out += fmt::format(" (plan -s parallel, batch 1, context {})\n", p.context);
  const double gap = r.decode.measured_s - r.decode.predicted_s;
  out += fmt::format("  each rank holds {} of weights; measured - predicted = {}{} per step\n",
                     format_bytes(p.weight_bytes_per_device), gap < 0 ? "-" : "+", format_seconds(std::abs(gap)));
  out += "  communication: " + describe_comm_model(r.comm) + "\n";
  if (r.comm.shares_host)
    out += fmt::format("  the ranks share this host: each runs on an even 1/{} of its probed bandwidth and peaks ({} threads)\n",
                       r.plan.devices(), hw.threads);
  if (!r.comm.measured)
    out += "  the profile has no \"dist\" entry: each rank is priced as a whole host at its own threads, with a generic link\n"
           "  (measure this machine's with mpirun -np 2 ridge probe --dist)\n";
  if (r.plan.tp > 1 && r.run.tp_mode == "gather")
    out += "  the planner prices TP as all-reduces of the hidden state (2 per layer, 1 where attention is replicated); "
           "--tp-mode gather runs all-gathers (4 per layer, 2)\n";
  out += "  the prefill has no split prediction (the planner prices decode steps); its tokens/s is measured only\n";
  return out + "\n";
}

std::string validate_report(const ValidateResult& r) {
  const HardwareSpec& hw = r.inputs.hw;
  std::string out = fmt::format("## Predicted vs measured: {} on {} ({})\n", r.inputs.spec.name.empty() ? r.inputs.spec.arch : r.inputs.spec.name,
                                hw.name, hw.note);
  out += fmt::format("  formats: weights {} ({:.2f} bits), head {}, KV {}, activations {}\n", r.inputs.precision.weights.name,
                     r.inputs.precision.weights.bits, r.inputs.precision.embeddings.name, r.inputs.precision.kv.name,
                     r.inputs.precision.activations.name);
  TextTable t({"phase", "predicted", "measured", "measured/predicted", "predicted tok/s", "measured tok/s", "bound"});
  const StepTime pt = step_time(r.prefill_cost, hw), dt = step_time(r.decode_cost, hw);
  const double n = double(r.options.prompt);
  t.add_row({fmt::format("prefill {} tokens", r.options.prompt), format_seconds(r.prefill.predicted_s), format_seconds(r.prefill.measured_s),
             format_number(r.prefill.ratio()), format_number(n / r.prefill.predicted_s), format_number(n / r.prefill.measured_s),
             pt.memory_bound() ? "memory" : "compute"});
  t.add_row({fmt::format("decode step (x{})", r.options.decode), format_seconds(r.decode.predicted_s), format_seconds(r.decode.measured_s),
             format_number(r.decode.ratio()), format_number(1 / r.decode.predicted_s), format_number(1 / r.decode.measured_s),
             dt.memory_bound() ? "memory" : "compute"});
  out += t.render();
  // What the measurement means in roofline terms.
  const double decode_bw = r.decode_cost.bytes() / r.decode.measured_s;
  const double prefill_rate = r.prefill_cost.flops() / r.prefill.measured_s;
  out += fmt::format("  decode moved {} per step at {} = {}% of the probed {}\n", format_bytes(r.decode_cost.bytes()),
                     format_rate(decode_bw, "B/s"), format_number(100 * decode_bw / hw.memory_bw, 2),
                     format_rate(hw.memory_bw, "B/s"));
  const ComputeClass c = gemm_compute(r.inputs.precision.weights, r.inputs.precision.activations);
  out += fmt::format("  prefill ran {} at {} = {}% of the probed {} peak {}\n", format_rate(r.prefill_cost.flops(), "FLOPs"),
                     format_rate(prefill_rate, "FLOP/s"), format_number(100 * prefill_rate / hw.peak(c), 2), compute_class_name(c),
                     format_rate(hw.peak(c), "FLOP/s"));
  out += fmt::format("  fitted overheads: {} per step + {} per token (prediction + overheads = measurement)\n",
                     format_seconds(r.fitted.per_step_s), format_seconds(r.fitted.per_token_s));
  const double worst = std::max(r.prefill.ratio(), r.decode.ratio());
  if (worst > 1.25) {
    out += "  the gap: the roofline assumes kernels that stream each weight byte once at the probed bandwidth and\n"
           "  multiply at the probed SIMD peak. Slower than that, the step is bound by instructions per weight, not\n"
           "  by memory traffic: weight types without an integer kernel (K-quants, f16) are dequantized a row at a\n"
           "  time, the integer kernels do not yet stream at full bandwidth, attention is not tiled, and every\n"
           "  parallel region costs a barrier. The fitted overheads above carry that into later plans\n"
           "  (--save-calibration); faster kernels shrink them, and the roofline stays the ceiling.\n";
  } else {
    out += "  within 25%: the kernels reach the roofline this machine's probe predicts.\n";
  }
  return out + "\n";
}

std::string default_calibration_path() { return ridge_home() + "/plan_calibration.json"; }

void save_calibration(const ValidateResult& r, const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const nlohmann::json j = {{"per_step_s", r.fitted.per_step_s}, {"per_token_s", r.fitted.per_token_s},
                            {"model", r.inputs.spec.name}, {"cpu", r.inputs.hw.name}, {"threads", r.inputs.hw.threads}};
  std::ofstream out(path);
  if (!out) fail("cannot write {}", path);
  out << j.dump(2) << "\n";
}

std::optional<Overheads> load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    return Overheads{j.at("per_step_s").get<double>(), j.at("per_token_s").get<double>()};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace ridge::plan
