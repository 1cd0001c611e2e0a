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

// Ranks on one host split it: each runs on an even share of its bandwidth, peaks and memory.
HardwareSpec rank_share(const HardwareSpec& hw, const CommModel& comm, int64_t devices) {
  if (!comm.shares_host || devices <= 1) return hw;
  HardwareSpec h = hw;
  const double n = double(devices);
  for (double* x : {&h.memory_bytes, &h.memory_bw, &h.peak_f32, &h.peak_bf16, &h.peak_fp8, &h.peak_int8, &h.peak_fp4}) *x /= n;
  return h;
}

// The logits' way to world rank 0: the tensor-parallel group gathers each rank's vocabulary slice
// on its first rank; with stages, the last stage then sends the rows to rank 0.
double logits_comm_seconds(const CommModel& comm, double logits_bytes, int64_t tp, int64_t pp) {
  double s = tp > 1 ? double(tp - 1) * send_seconds(comm, logits_bytes / double(tp)) : 0;
  if (pp > 1) s += send_seconds(comm, logits_bytes);
  return s;
}

}  // namespace

CommModel plan_comm_model(const HardwareSpec& hw, double collective_latency_s) {
  if (hw.measured_comm) return *hw.measured_comm;
  return generic_comm_model(hw.interconnect_bw > 0 ? hw.interconnect_bw : hw.memory_bw, collective_latency_s);
}

ParallelDecode parallel_decode(const PlanInputs& in, const ParallelPlan& plan, int64_t batch, int64_t context,
                               double collective_latency_s) {
  ParallelDecode r;
  r.plan = plan;
  r.batch = batch;
  r.context = context;
  const CommModel comm = plan_comm_model(in.hw, collective_latency_s);
  const HardwareSpec hw = rank_share(in.hw, comm, plan.devices());
  const StepCost global = step_cost(in.spec, in.precision, {.n_seq = batch, .n_new = 1, .n_past = context});
  const StepCost share = device_share(global, in.spec, plan);
  const StepTime stage = step_time(share, hw, in.overheads);

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
  r.fits = r.weight_bytes_per_device + r.kv_bytes_per_device <= hw.memory_bytes;

  // Each token crosses every stage in turn: pipeline stages add up for one token's latency, and
  // so do every stage's all-reduces.
  r.stage_s = stage.seconds;
  const double act = in.precision.activations.bytes();
  const double local_tokens = double(batch) / double(plan.ep);
  const double hidden_bytes = local_tokens * double(in.spec.n_embd) * act;
  double comm_s = tp_comm_seconds(comm, in.spec.n_layer, hidden_bytes, plan.tp);
  if (plan.ep > 1 && in.spec.is_moe()) {
    const double moe_layers = double(in.spec.n_layer - in.spec.n_layer_dense_lead);
    const double a2a = hidden_bytes * double(in.spec.n_expert_used) * double(plan.ep - 1) / double(plan.ep);
    comm_s += 2.0 * moe_layers * send_seconds(comm, a2a);
  }
  comm_s += pp_comm_seconds(comm, hidden_bytes, plan.pp);
  comm_s += logits_comm_seconds(comm, double(batch) * double(in.spec.n_vocab) * act, plan.tp, plan.pp);
  r.comm_s = comm_s;
  r.step_s = double(plan.pp) * stage.seconds + r.comm_s;
  return r;
}

ParallelPrefill parallel_prefill(const PlanInputs& in, const ParallelPlan& plan, int64_t prompt, int64_t pieces,
                                 double collective_latency_s) {
  ParallelPrefill r;
  r.plan = plan;
  r.prompt = prompt;
  r.pieces = pieces > 0 ? pieces : std::max<int64_t>(plan.pp, prompt / 256);
  r.pieces = std::clamp<int64_t>(r.pieces, 1, prompt);
  const CommModel comm = plan_comm_model(in.hw, collective_latency_s);
  const HardwareSpec hw = rank_share(in.hw, comm, plan.devices());
  const double act = in.precision.activations.bytes();
  const int64_t stage_layers = std::max<int64_t>(1, in.spec.n_layer / plan.pp);
  std::vector<double> done(size_t(plan.pp), 0.0);  // when each stage finished its latest chunk
  for (int64_t i = 0, past = 0; i < r.pieces; ++i) {
    const int64_t n = (prompt * (i + 1)) / r.pieces - past;
    const bool last = i == r.pieces - 1;
    const StepCost global = step_cost(in.spec, in.precision, {.n_seq = 1, .n_new = n, .n_past = past});
    StepCost share = device_share(global, in.spec, plan);
    // Only the last chunk projects onto the vocabulary (one row), on the last stage.
    if (!last) std::erase_if(share.ops, [](const OpCost& op) { return op.name == "output_head"; });
    const double hidden = double(n) * double(in.spec.n_embd) * act;
    const double tp_s = tp_comm_seconds(comm, stage_layers, hidden, plan.tp);
    const double hop_s = plan.pp > 1 ? send_seconds(comm, hidden) : 0.0;
    const double compute = step_time(share, hw, in.overheads).seconds + tp_s;
    double ready = 0;  // when the chunk's input is at the stage
    for (int64_t st = 0; st < plan.pp; ++st) {
      const double start = std::max(ready, done[size_t(st)]);
      done[size_t(st)] = start + compute;
      ready = done[size_t(st)] + hop_s;
      r.comm_s += tp_s + (st + 1 < plan.pp ? hop_s : 0.0);
    }
    past += n;
  }
  const double logits = logits_comm_seconds(comm, double(in.spec.n_vocab) * act, plan.tp, plan.pp);
  r.comm_s += logits;
  r.seconds = done.back() + logits;
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
