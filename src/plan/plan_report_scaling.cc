// The report's sections past one device and one stream: parallelism, MoE routing, disaggregated
// pools, speculative decoding, and the second seed's GEMM shape table.
#include <fmt/format.h>

#include "plan/gemm_shapes.h"
#include "plan/report_section.h"

namespace ridge::plan {

using nlohmann::json;

namespace {

json plan_json(const ParallelPlan& p) {
  return {{"layout", describe_plan(p)}, {"tp", p.tp}, {"pp", p.pp}, {"ep", p.ep}, {"kvp", p.kvp}};
}

json decode_json(const ParallelDecode& r) {
  json j = plan_json(r.plan);
  j.update({{"batch", r.batch}, {"context", r.context}, {"fits", r.fits}, {"weight_bytes_per_device", r.weight_bytes_per_device},
            {"kv_bytes_per_device", r.kv_bytes_per_device}, {"stage_s", r.stage_s}, {"step_s", r.step_s}, {"comm_s", r.comm_s},
            {"helix_comm_s", r.helix_comm_s}, {"tok_s_total", r.tok_s_total()}, {"tok_s_per_stream", r.tok_s_per_stream()}});
  return j;
}

// --helix N: one process, TP N and Helix N side by side at the asked-for context: what each rank
// stores, the longest context its KV pool holds, a decode step's parts, and a prompt's prefill.
void add_helix_comparison(const PlanInputs& in, const PlanOptions& o, int64_t batch, ReportSection& s) {
  const ParallelPlan helix = o.parallel;
  ParallelPlan tp = helix;
  tp.kvp = 1;
  const std::vector<ParallelPlan> layouts = {ParallelPlan{}, tp, helix};
  TextTable t({"layout", "batch", "weights/rank", "KV/rank", "fits", "KV pool/rank", "longest context", "stage", "comm",
               "Helix all-gathers", "ITL", "tok/s total", "tok/s/stream"});
  json rows = json::array(), capacity = json::array(), prefill = json::array();
  std::vector<int64_t> batches = {1};
  if (batch > 1) batches.push_back(batch);
  for (int64_t b : batches)
    for (const auto& plan : layouts) {
      const ParallelDecode r = parallel_decode(in, plan, b, o.context);
      const KvCapacity c = parallel_kv_capacity(in, plan, o.context, o.kv_pool_bytes);
      t.add_row({describe_plan(plan), std::to_string(b), format_bytes(r.weight_bytes_per_device), format_bytes(r.kv_bytes_per_device),
                 r.fits ? "yes" : "no", format_bytes(c.pool_bytes), std::to_string(c.max_context), format_seconds(r.stage_s),
                 format_seconds(r.comm_s), format_seconds(r.helix_comm_s), format_seconds(r.step_s), format_number(r.tok_s_total()),
                 format_number(r.tok_s_per_stream())});
      json j = decode_json(r);
      j.update({{"kv_pool_bytes_per_device", c.pool_bytes}, {"max_context", c.max_context}, {"max_sequences", c.max_sequences}});
      rows.push_back(j);
    }
  for (const auto& plan : layouts) {
    const ParallelPrefill p = parallel_prefill(in, plan, o.prompt, plan.pp > 1 ? 0 : 1);
    s.notes.push_back(fmt::format("prefill of {} tokens, {}: {} ({} tok/s, {} in messages, {} of them Helix all-gathers)", o.prompt,
                                  describe_plan(plan), format_seconds(p.seconds), format_number(p.tok_s()), format_seconds(p.comm_s),
                                  format_seconds(p.helix_comm_s)));
    json j = plan_json(plan);
    j.update({{"prompt", o.prompt}, {"pieces", p.pieces}, {"seconds", p.seconds}, {"comm_s", p.comm_s},
              {"helix_comm_s", p.helix_comm_s}, {"tok_s", p.tok_s()}});
    prefill.push_back(j);
  }
  const int64_t width = in.spec.is_mla() ? in.spec.kv_lora_rank : in.spec.head_dim;
  s.notes.push_back(fmt::format("Helix {}: attention weights whole on every rank, each sequence's KV split by position (1/{} per rank); "
                                "after each layer's attention an all-gather of {} heads x ({} + 2) f32 per token ({} per rank at batch 1)",
                                helix.kvp, helix.kvp, in.spec.n_head, width, format_bytes(helix_partial_bytes(in.spec, 1))));
  if (in.spec.is_mla())
    s.notes.push_back(fmt::format("TP {} on MLA: attention replicated, so every rank stores and reads the whole latent KV", tp.tp));
  else if (in.spec.n_head_kv < tp.tp)
    s.notes.push_back(fmt::format("TP {}: {} KV heads, each replicated on {} ranks", tp.tp, in.spec.n_head_kv, tp.tp / in.spec.n_head_kv));
  s.more_tables.emplace_back(fmt::format("Helix {} against TP {} and one process at context {}{}:", helix.kvp, tp.tp, o.context,
                                         o.kv_pool_bytes > 0 ? fmt::format(", KV pool {} per rank", format_bytes(o.kv_pool_bytes)) : ""),
                             std::move(t));
  s.json["helix"] = {{"kvp", helix.kvp}, {"context", o.context}, {"kv_pool_bytes", o.kv_pool_bytes}, {"rows", rows},
                     {"prefill", prefill}};
}

}  // namespace

ReportSection parallel_section(const PlanInputs& in, const PlanOptions& o) {
  const int64_t batch = o.batches.empty() ? 1 : o.batches.back();
  const CommModel comm = plan_comm_model(in.hw);
  const std::string over = comm.measured ? comm.transport + " (measured)"
                           : in.hw.interconnect_bw > 0 ? format_rate(in.hw.interconnect_bw, "B/s")
                                                       : "memory";
  ReportSection s{"parallel", fmt::format("Parallel decode over {} (batch {} and 1, context {})", over, batch, o.context)};
  s.table = TextTable({"TP", "PP", "EP", "KVP", "devices", "weights/dev", "KV/dev", "fits", "batch", "ITL", "comm", "tok/s total",
                       "tok/s/stream"});
  // A GPU gets the usual sweep; a CPU (shown only for an explicit --tp / --pp) one process against the plan asked for.
  std::vector<ParallelPlan> plans = {{1, 1, 1, 1}};
  if (in.hw.kind == "gpu") {
    plans.insert(plans.end(), {{2, 1, 1, 1}, {4, 1, 1, 1}, {8, 1, 1, 1}, {1, 2, 1, 1}, {1, 4, 1, 1}});
    if (in.spec.is_moe()) plans.insert(plans.end(), {{1, 1, 8, 1}, {1, 1, 32, 1}});
  }
  if (o.parallel.devices() > 1) plans.push_back(o.parallel);
  json rows = json::array();
  for (const auto& plan : plans) {
    for (int64_t b : {int64_t(1), batch}) {
      if (b < plan.ep) continue;  // data-parallel attention needs a sequence per device
      const ParallelDecode r = parallel_decode(in, plan, b, o.context);
      s.table.add_row({std::to_string(plan.tp), std::to_string(plan.pp), std::to_string(plan.ep), std::to_string(plan.kvp),
                       std::to_string(plan.devices()), format_bytes(r.weight_bytes_per_device), format_bytes(r.kv_bytes_per_device),
                       r.fits ? "yes" : "no", std::to_string(b), format_seconds(r.step_s), format_seconds(r.comm_s),
                       format_number(r.tok_s_total()), format_number(r.tok_s_per_stream())});
      rows.push_back(decode_json(r));
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
  s.notes.push_back("TP: an all-reduce of the hidden state after attention and after the FFN of each layer, a gather of the logits' "
                    "vocabulary slices;");
  s.notes.push_back("PP: stages add up per token (decode leaves bubbles), a send of the hidden state per hop;");
  s.notes.push_back("EP: experts split, attention data-parallel, 2 all-to-alls per MoE layer;");
  if (in.spec.is_mla())
    s.notes.push_back("MLA under TP: attention replicated (weights and latent KV whole on every rank), one all-reduce per layer;");
  s.notes.push_back("KVP (Helix): the TP ranks split each sequence's KV by position, attention weights whole, an all-gather of the "
                    "partial attention per layer;");
  if (o.parallel.helix()) add_helix_comparison(in, o, batch, s);
  s.notes.push_back("communication: " + describe_comm_model(comm));
  if (comm.measured && o.parallel.devices() > 1 && o.parallel.devices() != comm.ranks)
    s.notes.push_back(fmt::format("the all-reduce was measured with {} ranks; {} devices carry its bus bandwidth over",
                                  comm.ranks, o.parallel.devices()));
  if (comm.shares_host)
    s.notes.push_back("the ranks share this host: each runs on an even share of its bandwidth, cores and memory");
  if (!comm.measured && in.hw.kind == "cpu")
    s.notes.push_back("the profile has no \"dist\" entry: measure this machine's with mpirun -np 2 ridge probe --dist");
  s.json.update({{"rows", rows},
            {"prefill", prefill},
            {"comm", {{"measured", comm.measured}, {"transport", comm.measured ? comm.transport : "generic"},
                      {"ranks", comm.ranks}, {"shares_host", comm.shares_host},
                      {"all_reduce_bus",
                       {{"latency_s", comm.all_reduce_bus.latency_s}, {"bandwidth", comm.all_reduce_bus.bandwidth}}},
                      {"send_recv", {{"latency_s", comm.send_recv.latency_s}, {"bandwidth", comm.send_recv.bandwidth}}}}}});
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
