// The report's sections past one device and one stream: parallelism, MoE routing, disaggregated
// pools, speculative decoding, and the second seed's GEMM shape table.
#include <fmt/format.h>

#include "plan/gemm_shapes.h"
#include "plan/report_section.h"

namespace ridge::plan {

using nlohmann::json;

ReportSection parallel_section(const PlanInputs& in, const PlanOptions& o) {
  const int64_t batch = o.batches.empty() ? 1 : o.batches.back();
  const CommModel comm = plan_comm_model(in.hw);
  const std::string over = comm.measured ? comm.transport + " (measured)"
                           : in.hw.interconnect_bw > 0 ? format_rate(in.hw.interconnect_bw, "B/s")
                                                       : "memory";
  ReportSection s{"parallel", fmt::format("Parallel decode over {} (batch {} and 1, context {})", over, batch, o.context)};
  s.table = TextTable({"TP", "PP", "EP", "devices", "weights/dev", "fits", "batch", "ITL", "comm", "tok/s total", "tok/s/stream"});
  // A GPU gets the usual sweep; a CPU (shown only for an explicit --tp / --pp) one process against the plan asked for.
  std::vector<ParallelPlan> plans = {{1, 1, 1}};
  if (in.hw.kind == "gpu") {
    plans.insert(plans.end(), {{2, 1, 1}, {4, 1, 1}, {8, 1, 1}, {1, 2, 1}, {1, 4, 1}});
    if (in.spec.is_moe()) plans.insert(plans.end(), {{1, 1, 8}, {1, 1, 32}});
  }
  if (o.parallel.devices() > 1) plans.push_back(o.parallel);
  json rows = json::array();
  for (const auto& plan : plans) {
    for (int64_t b : {int64_t(1), batch}) {
      if (b < plan.ep) continue;  // data-parallel attention needs a sequence per device
      const ParallelDecode r = parallel_decode(in, plan, b, o.context);
      s.table.add_row({std::to_string(plan.tp), std::to_string(plan.pp), std::to_string(plan.ep), std::to_string(plan.devices()),
                       format_bytes(r.weight_bytes_per_device), r.fits ? "yes" : "no", std::to_string(b), format_seconds(r.step_s),
                       format_seconds(r.comm_s), format_number(r.tok_s_total()), format_number(r.tok_s_per_stream())});
      rows.push_back({{"tp", plan.tp}, {"pp", plan.pp}, {"ep", plan.ep}, {"batch", b}, {"fits", r.fits},
                      {"weight_bytes_per_device", r.weight_bytes_per_device}, {"step_s", r.step_s}, {"comm_s", r.comm_s},
                      {"tok_s_total", r.tok_s_total()}});
    }
  }
  // A prompt through the asked-for pipeline: in chunks (ridge's default) against one piece.
  json prefill = json::array();
  if (o.parallel.pp > 1) {
    for (int64_t pieces : {int64_t(1), int64_t(0)}) {
      const ParallelPrefill p = parallel_prefill(in, o.parallel, o.prompt, pieces);
      s.notes.push_back(fmt::format("prefill of {} tokens over TP {} x PP {} in {} piece{}: {} ({} tok/s, {} in messages)",
                                    o.prompt, o.parallel.tp, o.parallel.pp, p.pieces, p.pieces == 1 ? "" : "s",
                                    format_seconds(p.seconds), format_number(p.tok_s()), format_seconds(p.comm_s)));
      prefill.push_back({{"tp", o.parallel.tp}, {"pp", o.parallel.pp}, {"prompt", o.prompt}, {"pieces", p.pieces},
                         {"seconds", p.seconds}, {"comm_s", p.comm_s}, {"tok_s", p.tok_s()}});
    }
    const PrefillPoint one = prefill_point(in, o.prompt);
    s.notes.push_back(fmt::format("prefill of {} tokens in one process: {} ({} tok/s)", o.prompt,
                                  format_seconds(one.time.seconds), format_number(one.tok_s())));
    prefill.push_back({{"tp", 1}, {"pp", 1}, {"prompt", o.prompt}, {"pieces", 1}, {"seconds", one.time.seconds},
                       {"comm_s", 0.0}, {"tok_s", one.tok_s()}});
  }
  s.notes.push_back("TP: 2 all-reduces of the hidden state per layer and a gather of the logits' vocabulary slices;");
  s.notes.push_back("PP: stages add up per token (decode leaves bubbles), a send of the hidden state per hop;");
  s.notes.push_back("EP: experts split, attention data-parallel, 2 all-to-alls per MoE layer");
  s.notes.push_back("communication: " + describe_comm_model(comm));
  if (comm.measured && o.parallel.devices() > 1 && o.parallel.devices() != comm.ranks)
    s.notes.push_back(fmt::format("the all-reduce was measured with {} ranks; {} devices carry its bus bandwidth over",
                                  comm.ranks, o.parallel.devices()));
  if (comm.shares_host)
    s.notes.push_back("the ranks share this host: each runs on an even share of its bandwidth, cores and memory");
  if (!comm.measured && in.hw.kind == "cpu")
    s.notes.push_back("the profile has no \"dist\" entry: measure this machine's with mpirun -np 2 ridge probe --dist");
  s.json = {{"rows", rows},
            {"prefill", prefill},
            {"comm", {{"measured", comm.measured}, {"transport", comm.measured ? comm.transport : "generic"},
                      {"ranks", comm.ranks}, {"shares_host", comm.shares_host},
                      {"all_reduce_bus",
                       {{"latency_s", comm.all_reduce_bus.latency_s}, {"bandwidth", comm.all_reduce_bus.bandwidth}}},
                      {"send_recv", {{"latency_s", comm.send_recv.latency_s}, {"bandwidth", comm.send_recv.bandwidth}}}}}};
  return s;
}

ReportSection moe_section(const PlanInputs& in, const PlanOptions& o) {
  ReportSection s{"moe", fmt::format("MoE: GEMM-M per expert = global concurrency x top-{} / {} experts", in.spec.n_expert_used,
                                     in.spec.n_expert)};
  s.table = TextTable({"global concurrency", "GEMM-M per expert", "experts touched/layer", "expert weights read"});
  json rows = json::array();
  for (int64_t c : {int64_t(1), int64_t(32), int64_t(256), int64_t(1024), int64_t(4096), int64_t(16384)}) {
    const double m = moe_gemm_m(c, in.spec.n_expert_used, in.spec.n_expert);
    const double touched = experts_touched(in.spec, c);
    const double expert_bytes = 3.0 * double(in.spec.n_embd) * double(in.spec.n_ff_expert) * in.precision.weights.bytes() *
                                touched * double(in.spec.n_layer - in.spec.n_layer_dense_lead);
    s.table.add_row({std::to_string(c), format_number(m), format_number(touched), format_bytes(expert_bytes)});
    rows.push_back({{"concurrency", c}, {"gemm_m", m}, {"experts_touched", touched}, {"expert_bytes", expert_bytes}});
  }
  const ParamCount pc = param_count(in.spec);
  s.notes.push_back(fmt::format("{} total, {} active per token: small batches pay for capacity they do not use",
                                format_count(pc.total()), format_count(pc.active())));
  s.json = {{"rows", rows}};
  return s;
}

ReportSection disagg_section(const PlanInputs& in, const PlanOptions& o) {
  const TrafficMix& t = o.traffic;
  ReportSection s{"disagg", fmt::format("Disaggregated pools for {} req/s, {} prompt + {} output tokens, ITL <= {}",
                                        format_number(t.requests_per_s), t.prompt_tokens, t.output_tokens,
                                        format_seconds(t.itl_slo_s))};
  const PoolSizing p = size_disaggregated_pools(in, t);
  s.table = TextTable({"pool", "per device", "devices (load)", "devices to buy"});
  s.table.add_row({"prefill", fmt::format("{} per request", format_seconds(p.prefill_s_per_request)),
                   format_number(p.prefill_devices), std::to_string(int64_t(std::ceil(p.prefill_devices)))});
  s.table.add_row({"decode", fmt::format("batch {}, {} tok/s", p.decode_batch, format_number(p.decode_tok_s_per_device)),
                   format_number(p.decode_devices), std::to_string(int64_t(std::ceil(p.decode_devices)))});
  s.notes.push_back(p.note);
  s.json = {{"prefill_s_per_request", p.prefill_s_per_request}, {"prefill_devices", p.prefill_devices},
            {"decode_batch", p.decode_batch}, {"decode_tok_s_per_device", p.decode_tok_s_per_device},
            {"decode_devices", p.decode_devices}, {"note", p.note}};
  return s;
}

ReportSection speculative_section(const PlanInputs& in, const PlanOptions& o) {
  const SpeculativeDecode& sd = o.speculative;
  ReportSection s{"speculative", fmt::format("Speculative decoding: {} draft tokens, acceptance {}, draft step = {} of a target step",
                                             sd.draft_tokens, format_number(sd.acceptance), format_number(sd.draft_cost))};
  s.table = TextTable({"batch", "tokens/round", "plain step", "verify step", "round", "speedup"});
  json rows = json::array();
  for (int64_t b : o.batches) {
    const SpeculativeResult r = speculative_decode(in, sd, b, o.context);
    s.table.add_row({std::to_string(b), format_number(r.tokens_per_round), format_seconds(r.target_step_s),
                     format_seconds(r.verify_step_s), format_seconds(r.round_s), format_number(r.speedup) + "x"});
    rows.push_back({{"batch", b}, {"tokens_per_round", r.tokens_per_round}, {"speedup", r.speedup}});
  }
  s.notes.push_back("verification reads the weights once for k+1 tokens: a win while decode is memory-bound, fading as batch fills compute");
  s.json = {{"rows", rows}};
  return s;
}

ReportSection gemm_section(const PlanInputs& in, const PlanOptions& o) {
  const int64_t m = o.gemm_tokens > 0 ? o.gemm_tokens : o.prompt;
  const GemmFormats f{in.precision.activations, in.precision.weights, in.precision.activations};
  ReportSection s{"gemm", fmt::format("GEMM shapes at M = {} tokens (A {}, B {}, C {})", m, f.a.name, f.b.name, f.c.name)};
  s.table = TextTable({"layer", "M", "N", "K", "FLOPs", "read", "write", "FLOPs/B", "math", "read t", "write t", "bound",
                       "N waste 128/256/512"});
  json rows = json::array();
  for (const auto& g : model_gemm_shapes(in.spec, m, f, in.hw)) {
    s.table.add_row({g.name, std::to_string(g.m), std::to_string(g.n), std::to_string(g.k), format_rate(g.flops, ""),
                     format_bytes(g.read_bytes), format_bytes(g.write_bytes), format_number(g.intensity()), format_seconds(g.math_s),
                     format_seconds(g.read_s), format_seconds(g.write_s), g.memory_bound() ? "memory" : "compute",
                     fmt::format("{:.1f}/{:.1f}/{:.1f}%", 100 * g.tile_waste[0], 100 * g.tile_waste[1], 100 * g.tile_waste[2])});
    rows.push_back({{"layer", g.name}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"flops", g.flops}, {"read_bytes", g.read_bytes},
                    {"write_bytes", g.write_bytes}, {"math_s", g.math_s}, {"read_s", g.read_s}, {"write_s", g.write_s},
                    {"tile_waste", {g.tile_waste[0], g.tile_waste[1], g.tile_waste[2]}}});
  }
  s.notes.push_back("tile waste: share of launched work spent on padding N up to 128 (SM), 256 (clusterMMA), 512 (CGA)");
  s.json = {{"m", m}, {"rows", rows}};
  return s;
}

}  // namespace ridge::plan
