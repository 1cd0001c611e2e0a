#include "plan/plan_report.h"

#include <fmt/format.h>

#include "plan/report_section.h"

namespace ridge::plan {
namespace {

using nlohmann::json;

std::string bound_name(bool memory_bound) { return memory_bound ? "memory" : "compute"; }

ReportSection model_section(const PlanInputs& in, const PlanModel& m) {
  ReportSection s{"model", fmt::format("Model {} ({})", in.spec.name.empty() ? in.spec.arch : in.spec.name, m.source)};
  const ParamCount pc = param_count(in.spec);
  const Precision& p = in.precision;
  s.table = TextTable({"quantity", "value"});
  s.table.add_row({"shape", fmt::format("H {} H' {} L {} heads {}/{} head_dim {} vocab {}", in.spec.n_embd, in.spec.n_ff,
                                        in.spec.n_layer, in.spec.n_head, in.spec.n_head_kv, in.spec.head_dim, in.spec.n_vocab)});
  if (in.spec.is_moe())
    s.table.add_row({"experts", fmt::format("{} routed (top-{}) + {} shared, width {}, {} dense lead layers", in.spec.n_expert,
                                            in.spec.n_expert_used, in.spec.n_shared_expert, in.spec.n_ff_expert,
                                            in.spec.n_layer_dense_lead)});
  if (in.spec.is_mla())
    s.table.add_row({"MLA", fmt::format("kv latent {} + rope {}, q latent {}", in.spec.kv_lora_rank, in.spec.qk_rope_head_dim,
                                        in.spec.q_lora_rank)});
  s.table.add_row({"parameters", format_count(pc.total())});
  s.table.add_row({"active per token", format_count(pc.active())});
  s.table.add_row({"formats", fmt::format("weights {}, embeddings {}, KV {}, activations {}", p.weights.name,
                                          p.embeddings.name, p.kv.name, p.activations.name)});
  s.table.add_row({"weight bytes", format_bytes(weight_bytes(in.spec, p))});
  s.table.add_row({"KV per token", format_bytes(kv_bytes_per_token(in.spec, p.kv))});
  if (!m.weights_note.empty()) s.notes.push_back("from the file: " + m.weights_note);
  s.json = {{"name", in.spec.name}, {"arch", in.spec.arch}, {"source", m.source}, {"params_total", pc.total()},
            {"params_active", pc.active()}, {"weight_bytes", weight_bytes(in.spec, p)},
            {"kv_bytes_per_token", kv_bytes_per_token(in.spec, p.kv)},
            {"formats", {{"weights", p.weights.name}, {"embeddings", p.embeddings.name}, {"kv", p.kv.name},
                         {"activations", p.activations.name}}}};
  return s;
}

ReportSection hardware_section(const PlanInputs& in) {
  const HardwareSpec& hw = in.hw;
  ReportSection s{"hardware", fmt::format("Hardware {} ({}): machine balance", hw.name, hw.source)};
  s.table = TextTable({"precision", "peak", "bandwidth", "balance FLOPs/B"});
  json rows = json::array();
  for (const auto& b : machine_balance(hw)) {
    s.table.add_row({std::string(compute_class_name(b.compute)), format_rate(b.peak, "FLOP/s"), format_rate(hw.memory_bw, "B/s"),
                     format_number(b.flops_per_byte)});
    rows.push_back({{"precision", compute_class_name(b.compute)}, {"peak_flops", b.peak}, {"balance", b.flops_per_byte}});
  }
  s.notes.push_back(fmt::format("memory {}, interconnect {}", format_bytes(hw.memory_bytes),
                                hw.interconnect_bw > 0 ? format_rate(hw.interconnect_bw, "B/s") : "none"));
  if (!hw.note.empty()) s.notes.push_back(hw.note);
  s.notes.push_back("below the balance an op is memory-bound (time = bytes / bandwidth), above it compute-bound");
  s.json = {{"name", hw.name}, {"source", hw.source}, {"memory_bytes", hw.memory_bytes}, {"bandwidth", hw.memory_bw},
            {"interconnect_bw", hw.interconnect_bw}, {"balance", rows}};
  return s;
}

ReportSection decode_section(const PlanInputs& in, const PlanOptions& o) {
  ReportSection s{"decode", fmt::format("Decode versus batch (context {} tokens per sequence)", o.context)};
  s.table = TextTable({"batch", "step", "tok/s total", "tok/s/stream", "bound", "weights", "KV", "activations", "FLOPs"});
  json rows = json::array();
  for (int64_t b : o.batches) {
    const DecodePoint p = decode_point(in, b, o.context);
    s.table.add_row({std::to_string(b), format_seconds(p.time.seconds), format_number(p.tok_s_total()),
                     format_number(p.tok_s_per_stream()), bound_name(p.time.memory_bound()), format_bytes(p.cost.weight_bytes()),
                     format_bytes(p.cost.kv_bytes()), format_bytes(p.cost.act_bytes()), format_rate(p.cost.flops(), "")});
    rows.push_back({{"batch", b}, {"step_s", p.time.seconds}, {"tok_s_total", p.tok_s_total()},
                    {"tok_s_per_stream", p.tok_s_per_stream()}, {"memory_bound", p.time.memory_bound()},
                    {"weight_bytes", p.cost.weight_bytes()}, {"kv_bytes", p.cost.kv_bytes()}, {"act_bytes", p.cost.act_bytes()},
                    {"flops", p.cost.flops()}});
  }
  const DecodePoint ceiling = decode_point(in, 1, 0);
  const int64_t cross = decode_crossover_batch(in, o.context);
  s.notes.push_back(fmt::format("single-stream ceiling: {} tok/s with weights alone (bandwidth / bytes per token)",
                                format_number(ceiling.tok_s_total())));
  const double weights = weight_bytes(in.spec, in.precision);
  if (in.hw.memory_bytes > 0 && weights > in.hw.memory_bytes)
    s.notes.push_back(fmt::format("the weights ({}) exceed one device's memory ({}): these are per-device rooflines; see 'parallel'",
                                  format_bytes(weights), format_bytes(in.hw.memory_bytes)));
  s.notes.push_back(cross > 0 ? fmt::format("decode turns compute-bound at batch {}", cross)
                              : "decode stays memory-bound at every batch: each sequence's KV traffic grows with it");
  s.json = {{"context", o.context}, {"rows", rows}, {"single_stream_ceiling_tok_s", ceiling.tok_s_total()},
            {"compute_bound_from_batch", cross}};
  return s;
}

// One device's ledger at a few contexts, then one rank's under the asked-for split (and TP's
// counterpart of a Helix plan): what a token costs each rank and the longest context its pool holds.
ReportSection kv_section(const PlanInputs& in, const PlanOptions& o) {
  const bool split = o.parallel.devices() > 1;
  ReportSection s{"kv", split ? "KV cache ledger (one device, then one rank of each split)" : "KV cache ledger (one device)"};
  s.table = TextTable({"layout", "context", "per token", "per sequence", "sequences that fit", "longest context"});
  json rows = json::array();
  auto add = [&](const ParallelPlan& plan, int64_t ctx) {
    const KvCapacity c = parallel_kv_capacity(in, plan, ctx, o.kv_pool_bytes);
    const std::string layout = plan.devices() > 1 ? describe_plan(plan) + " (per rank)" : "one device";
    s.table.add_row({layout, std::to_string(ctx), format_bytes(c.bytes_per_token), format_bytes(c.bytes_per_token * double(ctx)),
                     std::to_string(c.max_sequences), std::to_string(c.max_context)});
    rows.push_back({{"layout", describe_plan(plan)}, {"tp", plan.tp}, {"pp", plan.pp}, {"ep", plan.ep}, {"kvp", plan.kvp},
                    {"context", ctx}, {"bytes_per_token", c.bytes_per_token}, {"bytes_per_sequence", c.bytes_per_token * double(ctx)},
                    {"max_sequences", c.max_sequences}, {"pool_bytes", c.pool_bytes}, {"max_context", c.max_context}});
  };
  add(ParallelPlan{}, o.context);
  for (int64_t ctx : {int64_t(32768), int64_t(131072)})
    if (ctx != o.context) add(ParallelPlan{}, ctx);
  if (split) {
    if (o.parallel.helix()) {
      ParallelPlan tp = o.parallel;
      tp.kvp = 1;
      add(tp, o.context);
    }
    add(o.parallel, o.context);
  }
  const KvLedger k = kv_ledger(in, o.context);
  s.notes.push_back(o.kv_pool_bytes > 0 ? fmt::format("KV pool of {} per device (--kv-pool)", format_bytes(o.kv_pool_bytes))
                                        : fmt::format("memory left after {} of weights: {}", format_bytes(k.weight_bytes),
                                                      format_bytes(k.free_bytes)));
  if (split) s.notes.push_back("a split's rank: its pool is its memory after its share of the weights (or --kv-pool)");
  s.json = {{"rows", rows}, {"free_bytes", k.free_bytes}, {"pool_bytes", o.kv_pool_bytes}};
  return s;
}

ReportSection prefill_section(const PlanInputs& in, const PlanOptions& o) {
  ReportSection s{"prefill", "Prefill and time to first token (one sequence)"};
  s.table = TextTable({"prompt", "TTFT", "tok/s", "bound", "FLOPs/weight byte", "FLOPs/byte"});
  json rows = json::array();
  for (int64_t n : {int64_t(128), o.prompt, int64_t(8192)}) {
    const PrefillPoint p = prefill_point(in, n);
    s.table.add_row({std::to_string(n), format_seconds(p.time.seconds), format_number(p.tok_s()), bound_name(p.time.memory_bound()),
                     format_number(p.weight_intensity()), format_number(p.cost.flops() / p.cost.bytes())});
    rows.push_back({{"prompt", n}, {"ttft_s", p.time.seconds}, {"tok_s", p.tok_s()}, {"memory_bound", p.time.memory_bound()},
                    {"weight_intensity", p.weight_intensity()}});
  }
  s.json = {{"rows", rows}};
  return s;
}

ReportSection ops_section(const PlanInputs& in, const PlanOptions& o) {
  const int64_t batch = o.batches.empty() ? 1 : o.batches.front();
  ReportSection s{"ops", fmt::format("Per-op roofline: decode at batch {}, context {}", batch, o.context)};
  s.table = TextTable({"op", "layers", "M", "N", "K", "FLOPs", "bytes", "FLOPs/B", "time", "share", "bound"});
  const DecodePoint p = decode_point(in, batch, o.context);
  json rows = json::array();
  for (const auto& op : p.cost.ops) {
    const OpTime t = op_time(op, in.hw);
    const auto dim = [&](int64_t v) { return op.kind == OpKind::Gemm ? std::to_string(v) : std::string("-"); };
    s.table.add_row({op.name, std::to_string(op.n_layers), dim(op.m), dim(op.n), dim(op.k), format_rate(op.flops, ""),
                     format_bytes(op.bytes()), format_number(op.intensity()), format_seconds(t.seconds()),
                     fmt::format("{:.1f}%", 100 * t.seconds() / p.time.seconds), bound_name(t.memory_bound())});
    rows.push_back({{"op", op.name}, {"layers", op.n_layers}, {"m", op.m}, {"n", op.n}, {"k", op.k}, {"flops", op.flops},
                    {"weight_bytes", op.weight_bytes}, {"kv_bytes", op.kv_bytes}, {"act_bytes", op.act_bytes},
                    {"seconds", t.seconds()}, {"memory_bound", t.memory_bound()}});
  }
  s.json = {{"batch", batch}, {"context", o.context}, {"ops", rows}};
  return s;
}

ReportSection cost_section(const PlanInputs& in, const PlanOptions& o, double price) {
  ReportSection s{"cost", fmt::format("Cost per million output tokens at ${}/hour", format_number(price))};
  s.table = TextTable({"batch", "tok/s total", "$ per 1M tokens"});
  json rows = json::array();
  for (int64_t b : o.batches) {
    const double tok_s = decode_point(in, b, o.context).tok_s_total();
    s.table.add_row({std::to_string(b), format_number(tok_s), fmt::format("${}", format_number(cost_per_million_tokens(price, tok_s)))});
    rows.push_back({{"batch", b}, {"usd_per_million", cost_per_million_tokens(price, tok_s)}});
  }
  s.json = {{"price_per_hour", price}, {"rows", rows}};
  return s;
}

ReportSection slo_section(const PlanInputs& in, const PlanOptions& o) {
  ReportSection s{"slo", fmt::format("Largest batch with inter-token latency <= {} at context {}", format_seconds(o.itl_slo_s), o.context)};
  const SloBatch r = largest_batch_within_slo(in, o.itl_slo_s, o.context);
  s.table = TextTable({"batch", "ITL", "tok/s total", "limited by", "memory limit"});
  s.table.add_row({std::to_string(r.batch), format_seconds(r.point.time.seconds), format_number(r.batch ? r.point.tok_s_total() : 0),
                   r.slo_bound ? "latency SLO" : "KV memory", std::to_string(r.memory_limit)});
  s.json = {{"itl_slo_s", o.itl_slo_s}, {"batch", r.batch}, {"itl_s", r.point.time.seconds}, {"slo_bound", r.slo_bound},
            {"memory_limit", r.memory_limit}};
  return s;
}

ReportSection quant_section(const PlanInputs& in, const PlanOptions& o) {
  ReportSection s{"quant", "Quantization: every matrix in one format"};
  std::vector<NumberFormat> formats;
  for (const auto& name : o.quant_formats) formats.push_back(number_format(name));
  s.table = TextTable({"format", "bits/param", "weights", "devices", "1-stream ceiling tok/s"});
  json rows = json::array();
  for (const auto& r : quantization_table(in, formats)) {
    s.table.add_row({r.format.name, format_number(r.format.bits), format_bytes(r.weight_bytes), std::to_string(r.devices_needed),
                     format_number(r.ceiling_tok_s)});
    rows.push_back({{"format", r.format.name}, {"bits", r.format.bits}, {"weight_bytes", r.weight_bytes},
                    {"devices", r.devices_needed}, {"ceiling_tok_s", r.ceiling_tok_s}});
  }
  s.notes.push_back("devices: to hold the weights alone; the ceiling is one device's bandwidth over the bytes of one token");
  s.json = {{"rows", rows}};
  return s;
}

}  // namespace

std::string ReportSection::render() const {
  std::string out = "## " + title + "\n" + table.render();
  for (const auto& [heading, t] : more_tables) out += "  " + heading + "\n" + t.render();
  for (const auto& n : notes) out += "  " + n + "\n";
  return out + "\n";
}

const std::vector<std::string>& plan_section_names() {
  static const std::vector<std::string> names = {"model", "hardware", "decode", "kv",   "prefill", "ops",
                                                 "cost",  "slo",      "quant",  "parallel", "moe", "disagg",
                                                 "speculative", "gemm"};
  return names;
}

PlanReport build_plan_report(const PlanInputs& in, const PlanModel& model, const PlanOptions& o) {
  auto wanted = [&](const std::string& name) { return o.sections.empty() || o.sections.count(name) > 0; };
  const std::optional<double> price = o.price_per_hour ? o.price_per_hour : in.hw.price_per_hour;
  std::vector<ReportSection> sections;
  if (wanted("model")) sections.push_back(model_section(in, model));
  if (wanted("hardware")) sections.push_back(hardware_section(in));
  if (wanted("decode")) sections.push_back(decode_section(in, o));
  if (wanted("kv")) sections.push_back(kv_section(in, o));
  if (wanted("prefill")) sections.push_back(prefill_section(in, o));
  if (wanted("ops")) sections.push_back(ops_section(in, o));
  if (wanted("cost") && price) sections.push_back(cost_section(in, o, *price));
  if (wanted("slo")) sections.push_back(slo_section(in, o));
  if (wanted("quant")) sections.push_back(quant_section(in, o));
  // On a CPU only for an explicit --tp / --pp: one host rarely gains from splitting itself.
  if (wanted("parallel") && (in.hw.kind == "gpu" || o.parallel.devices() > 1)) sections.push_back(parallel_section(in, o));
  if (wanted("moe") && in.spec.is_moe()) sections.push_back(moe_section(in, o));
  if (wanted("disagg")) sections.push_back(disagg_section(in, o));
  if (wanted("speculative")) sections.push_back(speculative_section(in, o));
  if (wanted("gemm")) sections.push_back(gemm_section(in, o));
  PlanReport r;
  r.json = json::object();
  for (const auto& s : sections) {
    r.text += s.render();
    r.json[s.name] = s.json;
  }
  return r;
}

std::vector<RooflinePoint> roofline_points(const PlanInputs& in, const PlanOptions& o) {
  std::vector<RooflinePoint> points;
  auto add = [&](const StepCost& cost, const std::string& series) {
    for (const auto& op : cost.ops) {
      if (op.flops <= 0) continue;
      points.push_back({op.name, series, op.intensity(), op.flops / op_time(op, in.hw).seconds()});
    }
  };
  std::vector<int64_t> batches = {1};
  if (!o.batches.empty() && o.batches.back() > 1) batches.push_back(o.batches.back());
  for (int64_t b : batches) add(decode_point(in, b, o.context).cost, fmt::format("decode b={} ctx={}", b, o.context));
  add(prefill_point(in, o.prompt).cost, fmt::format("prefill {}", o.prompt));
  return points;
}

}  // namespace ridge::plan
