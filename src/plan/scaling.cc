#include "plan/scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ridge::plan {
namespace {

bool attention_linear(const std::string& name) { return name.rfind("attn_", 0) == 0; }

// The divisor of a layer matrix's bytes and FLOPs on one device, pipeline stages aside.
double linear_divisor(const Linear& lin, const ParallelPlan& plan, const AttentionShare& attn) {
  if (lin.routed()) return double(plan.tp * plan.ep);
  if (lin.name == "attn_out") return attn.out;
  if (attention_linear(lin.name)) return attn.qkv;
  return double(plan.tp);
}

// One device's share of a global step. TP splits every matrix and the attention as
// attention_share says; EP splits the experts and, with data-parallel attention, the sequences;
// PP splits the layers.
StepCost device_share(const StepCost& global, const ModelSpec& spec, const ParallelPlan& plan) {
  const double tp = double(plan.tp), pp = double(plan.pp), ep = double(plan.ep);
  const AttentionShare attn = attention_share(spec, plan);
  const std::vector<Linear> linears = model_linears(spec);
  StepCost share = global;
  for (auto& op : share.ops) {
    const auto lin = std::find_if(linears.begin(), linears.end(), [&](const Linear& l) { return l.name == op.name; });
    if (lin != linears.end()) {
      const double d = linear_divisor(*lin, plan, attn);
      op.flops /= d * pp * (lin->routed() ? 1.0 : ep);  // routed: d holds ep already
      op.weight_bytes /= d * pp;
    } else if (op.kind == OpKind::Attention) {
      op.flops /= attn.heads * pp * ep;
      op.kv_bytes /= attn.kv * pp * ep;
    } else {  // embedding rows, output head
      op.flops /= tp * pp * ep;
      op.weight_bytes /= tp * pp;
    }
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

// A step's collectives inside the TP group over `layers` layers for `tokens` tokens (the local
// ones under data-parallel attention): after the FFN an all-reduce of the hidden state; after
// attention one of it (TP, GQA), nothing (TP, MLA: replicated) or Helix's all-gather of the partial
// results. Returns the total; *helix_s gets the all-gathers' part.
double layer_comm_seconds(const CommModel& comm, const PlanInputs& in, const ParallelPlan& plan, double tokens,
                          int64_t layers, double* helix_s) {
  *helix_s = 0;
  if (plan.tp <= 1) return 0;
  const double hidden = tokens * double(in.spec.n_embd) * in.precision.activations.bytes();
  const double ffn = double(layers) * all_reduce_seconds(comm, hidden, plan.tp);
  if (plan.helix()) {
    *helix_s = double(layers) * all_gather_seconds(comm, helix_partial_bytes(in.spec, tokens), plan.kvp);
    return ffn + *helix_s;
  }
  if (in.spec.is_mla()) return ffn;
  return tp_comm_seconds(comm, layers, hidden, plan.tp);
}

}  // namespace

CommModel plan_comm_model(const HardwareSpec& hw, double collective_latency_s) {
  if (hw.measured_comm) return *hw.measured_comm;
  return generic_comm_model(hw.interconnect_bw > 0 ? hw.interconnect_bw : hw.memory_bw, collective_latency_s);
}

void check_parallel_plan(const ParallelPlan& plan) {
  if (plan.tp < 1 || plan.pp < 1 || plan.ep < 1 || plan.kvp < 1)
    fail("parallel sizes must be >= 1 (TP {}, PP {}, EP {}, KVP {})", plan.tp, plan.pp, plan.ep, plan.kvp);
  if (plan.kvp != 1 && plan.kvp != plan.tp)
    fail("Helix shards the KV over the tensor-parallel group: KV-parallel size {} must be 1 or equal TP {}", plan.kvp, plan.tp);
  if (plan.helix() && plan.ep > 1)
    fail("Helix keeps attention in the tensor-parallel group; it does not combine with data-parallel attention (EP {})", plan.ep);
}

std::string describe_plan(const ParallelPlan& plan) {
  if (plan.devices() == 1) return "one process";
  std::string out = plan.tp > 1 ? fmt::format("{} {}", plan.helix() ? "Helix" : "TP", plan.tp) : "";
  for (const auto& [name, n] : {std::pair{"PP", plan.pp}, std::pair{"EP", plan.ep}})
    if (n > 1) out += fmt::format("{}{} {}", out.empty() ? "" : " x ", name, n);
  return out;
}

AttentionShare attention_share(const ModelSpec& spec, const ParallelPlan& plan) {
  AttentionShare a;
  if (plan.tp <= 1) return a;
  if (plan.helix()) {
    a.heads = a.kv = double(plan.kvp);
    return a;
  }
  if (spec.is_mla()) return a;  // replicated
  const double tp = double(plan.tp), kv_split = double(std::min(plan.tp, spec.n_head_kv));
  const double q = double(spec.q_dim()), kv = 2.0 * double(spec.kv_dim());
  a.qkv = kv_split == tp ? tp : (q + kv) / (q / tp + kv / kv_split);
  a.out = a.heads = tp;
  a.kv = kv_split;
  return a;
}

double helix_partial_bytes(const ModelSpec& spec, double tokens) {
  const double width = double(spec.is_mla() ? spec.kv_lora_rank : spec.head_dim);
  return tokens * double(spec.n_head) * (width + 2.0) * 4.0;
}

double weight_bytes_per_device(const PlanInputs& in, const ParallelPlan& plan) {
  const AttentionShare attn = attention_share(in.spec, plan);
  double bytes = 0;
  for (const auto& lin : model_linears(in.spec)) bytes += lin.params() * in.precision.weights.bytes() / linear_divisor(lin, plan, attn);
  const ParamCount pc = param_count(in.spec);
  bytes += (pc.token_embedding + pc.output_head) * in.precision.embeddings.bytes() / double(plan.tp);
  return bytes / double(plan.pp);
}

double kv_bytes_per_token_per_device(const PlanInputs& in, const ParallelPlan& plan) {
  return kv_bytes_per_token(in.spec, in.precision.kv) / (attention_share(in.spec, plan).kv * double(plan.pp));
}

KvCapacity parallel_kv_capacity(const PlanInputs& in, const ParallelPlan& plan, int64_t context, double pool_bytes_per_device,
                                double collective_latency_s) {
  check_parallel_plan(plan);
  KvCapacity c;
  c.bytes_per_token = kv_bytes_per_token_per_device(in, plan);
  if (pool_bytes_per_device > 0) {
    c.pool_bytes = pool_bytes_per_device;
  } else {
    const HardwareSpec hw = rank_share(in.hw, plan_comm_model(in.hw, collective_latency_s), plan.devices());
    c.pool_bytes = std::max(0.0, hw.memory_bytes - weight_bytes_per_device(in, plan));
  }
  if (c.bytes_per_token <= 0) return c;
  c.max_context = int64_t(c.pool_bytes / c.bytes_per_token);
  // Under data-parallel attention each device holds its own sequences whole: ep pools.
  c.max_sequences = context > 0 ? int64_t(c.pool_bytes / (c.bytes_per_token * double(context))) * plan.ep : 0;
  return c;
}

ParallelDecode parallel_decode(const PlanInputs& in, const ParallelPlan& plan, int64_t batch, int64_t context,
                               double collective_latency_s) {
  check_parallel_plan(plan);
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
  r.weight_bytes_per_device = weight_bytes_per_device(in, plan);
  r.kv_bytes_per_device = kv_bytes_per_token_per_device(in, plan) * double(context) * double(batch) / double(plan.ep);
  r.fits = r.weight_bytes_per_device + r.kv_bytes_per_device <= hw.memory_bytes;

  // Each token crosses every stage in turn: pipeline stages add up for one token's latency, and
  // so do every stage's collectives.
  r.stage_s = stage.seconds;
  const double act = in.precision.activations.bytes();
  const double local_tokens = double(batch) / double(plan.ep);
  const double hidden_bytes = local_tokens * double(in.spec.n_embd) * act;
  double comm_s = layer_comm_seconds(comm, in, plan, local_tokens, in.spec.n_layer, &r.helix_comm_s);
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
  check_parallel_plan(plan);
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
    double helix_s = 0;
    const double tp_s = layer_comm_seconds(comm, in, plan, double(n), stage_layers, &helix_s);
    const double hop_s = plan.pp > 1 ? send_seconds(comm, hidden) : 0.0;
    const double compute = step_time(share, hw, in.overheads).seconds + tp_s;
    double ready = 0;  // when the chunk's input is at the stage
    for (int64_t st = 0; st < plan.pp; ++st) {
      const double start = std::max(ready, done[size_t(st)]);
      done[size_t(st)] = start + compute;
      ready = done[size_t(st)] + hop_s;
      r.comm_s += tp_s + (st + 1 < plan.pp ? hop_s : 0.0);
      r.helix_comm_s += helix_s;
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
