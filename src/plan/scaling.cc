#include "plan/scaling.h"

#include <algorithm>
#include <cmath>

namespace ridge::plan {
namespace {

// One device's share of a global step. TP splits every matrix and the KV heads (KV beyond
// n_head_kv ways is replicated; an MLA latent is shared by all heads, so TP cannot split it);
// EP splits the experts and, with data-parallel attention, the sequences; PP splits the layers.
StepCost device_share(const StepCost& global, const ModelSpec& spec, const ParallelPlan& plan) {
  const double tp = double(plan.tp), pp = double(plan.pp), ep = double(plan.ep);
  const double kv_split = spec.is_mla() ? 1.0 : double(std::min(plan.tp, spec.n_head_kv));
  StepCost share = global;
  for (auto& op : share.ops) {
    const bool routed = op.name.rfind("expert_", 0) == 0;
    op.flops /= tp * pp * ep;
    op.weight_bytes /= routed ? tp * pp * ep : tp * pp;
    op.kv_bytes /= kv_split * pp * ep;
    op.act_bytes /= pp * ep;
  }
  return share;
}

double ring_all_reduce_s(double bytes, int64_t n, double link_bw, double latency) {
  if (n <= 1) return 0;
  return 2.0 * double(n - 1) / double(n) * bytes / link_bw + latency;
}

}  // namespace

ParallelDecode parallel_decode(const PlanInputs& in, const ParallelPlan& plan, int64_t batch, int64_t context,
                               double collective_latency_s) {
  ParallelDecode r;
  r.plan = plan;
  r.batch = batch;
  r.context = context;
  const StepCost global = step_cost(in.spec, in.precision, {.n_seq = batch, .n_new = 1, .n_past = context});
  const StepCost share = device_share(global, in.spec, plan);
  const StepTime stage = step_time(share, in.hw, in.overheads);

  // What one device stores: its share of the weights and of its sequences' KV.
  const ParamCount pc = param_count(in.spec);
  double routed_params = 0;
  for (const auto& lin : model_linears(in.spec))
    if (lin.routed()) routed_params += lin.params();
  const double dense_params = pc.total() - routed_params;
  r.weight_bytes_per_device = dense_params * in.precision.weights.bytes() / double(plan.tp * plan.pp) +
                              routed_params * in.precision.weights.bytes() / double(plan.devices());
  const double kv_split = in.spec.is_mla() ? 1.0 : double(std::min(plan.tp, in.spec.n_head_kv));
  r.kv_bytes_per_device = kv_bytes_per_token(in.spec, in.precision.kv) * double(context) * double(batch) /
                          (kv_split * double(plan.pp * plan.ep));
  r.fits = r.weight_bytes_per_device + r.kv_bytes_per_device <= in.hw.memory_bytes;

  // Each token crosses every stage in turn: pipeline stages add up for one token's latency.
  r.stage_s = stage.seconds;
  const double local_tokens = double(batch) / double(plan.ep);
  const double hidden_bytes = local_tokens * double(in.spec.n_embd) * in.precision.activations.bytes();
  const double link = in.hw.interconnect_bw > 0 ? in.hw.interconnect_bw : in.hw.memory_bw;
  const double layers_per_stage = double(in.spec.n_layer) / double(plan.pp);
  double comm = 2.0 * layers_per_stage * ring_all_reduce_s(hidden_bytes, plan.tp, link, collective_latency_s);
  if (plan.ep > 1 && in.spec.is_moe()) {
    const double moe_layers = double(in.spec.n_layer - in.spec.n_layer_dense_lead) / double(plan.pp);
    const double a2a = hidden_bytes * double(in.spec.n_expert_used) * double(plan.ep - 1) / double(plan.ep);
    comm += 2.0 * moe_layers * (a2a / link + collective_latency_s);
  }
  r.comm_s = comm * double(plan.pp);
  const double hops = double(plan.pp - 1) * (hidden_bytes / link + collective_latency_s);
  r.step_s = double(plan.pp) * stage.seconds + r.comm_s + hops;
  return r;
}

double moe_gemm_m(int64_t global_concurrency, int64_t top_k, int64_t n_expert) {
  return double(global_concurrency) * double(top_k) / double(n_expert);
}

PoolSizing size_disaggregated_pools(const PlanInputs& in, const TrafficMix& mix) {
  PoolSizing s;
  s.prefill_s_per_request = prefill_point(in, mix.prompt_tokens).time.seconds;
  s.prefill_devices = mix.requests_per_s * s.prefill_s_per_request;
  // Decode sequences sit, on average, halfway through their output.
  const int64_t mean_context = mix.prompt_tokens + mix.output_tokens / 2;
  const SloBatch slo = largest_batch_within_slo(in, mix.itl_slo_s, mean_context);
  s.decode_batch = slo.batch;
  if (slo.batch == 0) {
    s.note = "no decode batch meets the ITL SLO on one device: shard the model (TP) or relax the SLO";
    return s;
  }
  s.decode_tok_s_per_device = slo.point.tok_s_total();
  s.decode_devices = mix.requests_per_s * double(mix.output_tokens) / s.decode_tok_s_per_device;
  s.note = slo.slo_bound ? "decode batch limited by the ITL SLO" : "decode batch limited by KV memory";
  return s;
}

SpeculativeResult speculative_decode(const PlanInputs& in, const SpeculativeDecode& spec, int64_t batch,
                                     int64_t context) {
  SpeculativeResult r;
  const double a = std::clamp(spec.acceptance, 0.0, 0.999999);
  const double k = double(spec.draft_tokens);
  r.tokens_per_round = (1.0 - std::pow(a, k + 1)) / (1.0 - a);
  r.target_step_s = decode_point(in, batch, context).time.seconds;
  const StepCost verify =
      step_cost(in.spec, in.precision, {.n_seq = batch, .n_new = spec.draft_tokens + 1, .n_past = context, .all_logits = true});
  r.verify_step_s = step_time(verify, in.hw, in.overheads).seconds;
  r.round_s = k * spec.draft_cost * r.target_step_s + r.verify_step_s;
  r.speedup = r.tokens_per_round * r.target_step_s / r.round_s;
  return r;
}

}  // namespace ridge::plan
