#pragma once
// Analyses past one device and one stream: tensor / pipeline / expert parallel decode with the
// interconnect's cost, MoE GEMM-M per expert, prefill/decode pool sizing for a traffic mix
// (disaggregation), and speculative decoding.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/serving.h"

namespace ridge::plan {

struct ParallelPlan {
  int64_t tp = 1;  // tensor parallel: matrices split, an all-reduce after attention (not on MLA, replicated) and the FFN
  int64_t pp = 1;  // pipeline parallel: layers split into stages, activations hop between them
  int64_t ep = 1;  // expert parallel (data parallel attention): experts split, 2 all-to-alls per MoE layer
  // Helix (KV parallel): 1, or tp. The TP group's ranks hold the attention weights whole and each
  // sequence's KV split by position (rank r keeps positions p with p % kvp == r), attend over their
  // own positions, and all-gather the partial softmax results after each layer's attention; the
  // FFN, experts and vocabulary split as TP splits them. It reuses the TP ranks: no extra devices.
  int64_t kvp = 1;
  int64_t devices() const { return tp * pp * ep; }
  bool helix() const { return kvp > 1; }
};
// Error unless the sizes are >= 1, kvp is 1 or tp, and Helix goes without ep (data-parallel attention).
void check_parallel_plan(const ParallelPlan& plan);
// "one process", "TP 4", "Helix 4", "TP 2 x PP 2", "Helix 2 x PP 2 x EP 1" style, for reports.
std::string describe_plan(const ParallelPlan& plan);

// How one rank of the TP group divides a layer's attention: the divisor of each part's bytes and
// FLOPs against one process (1 = replicated).
// - TP, GQA: query heads / tp; K/V heads / min(tp, n_head_kv) (fewer KV heads than ranks: each
//   replicated on tp / n_head_kv ranks); the output projection / tp.
// - TP, MLA: attention replicated, as ridge runs it: weights, FLOPs and the latent KV whole on each rank.
// - Helix: weights and projections whole; the attention kernel's FLOPs and the KV / kvp.
struct AttentionShare {
  double qkv = 1;    // input projections (attn_qkv; MLA's attn_q*, attn_kv_a, attn_kv_b)
  double out = 1;    // attn_out
  double heads = 1;  // the attention kernel's FLOPs
  double kv = 1;     // KV bytes stored and read
};
AttentionShare attention_share(const ModelSpec& spec, const ParallelPlan& plan);

// Helix's partial softmax results one rank contributes per layer: tokens x n_head x (width + 2)
// f32 (the unnormalised output, its running max and sum), width = head_dim or MLA's kv_lora_rank.
double helix_partial_bytes(const ModelSpec& spec, double tokens);

// Per-device weight bytes: attention as attention_share says, the rest / tp (routed experts / tp x
// ep), each / pp; embeddings and head in precision.embeddings.
double weight_bytes_per_device(const PlanInputs& in, const ParallelPlan& plan);
// One device's share of one token's KV (all its layers): kv_bytes_per_token / (share.kv x pp).
double kv_bytes_per_token_per_device(const PlanInputs& in, const ParallelPlan& plan);

// The KV pool of one device and what it holds.
struct KvCapacity {
  double bytes_per_token = 0;  // kv_bytes_per_token_per_device
  double pool_bytes = 0;       // the per-device KV budget
  int64_t max_context = 0;     // the longest single sequence the pool holds, floor(pool / bytes_per_token)
  int64_t max_sequences = 0;   // sequences of `context` tokens that fit
};
// pool_bytes_per_device <= 0: each device's memory (its share of the host when ranks share one)
// after its weights.
KvCapacity parallel_kv_capacity(const PlanInputs& in, const ParallelPlan& plan, int64_t context,
                                double pool_bytes_per_device = 0, double collective_latency_s = 5e-6);

struct ParallelDecode {
  ParallelPlan plan;
  int64_t batch = 0;    // global: all sequences the devices serve together
  int64_t context = 0;
  double weight_bytes_per_device = 0;
  double kv_bytes_per_device = 0;  // batch x context tokens of KV, this device's share
  bool fits = false;
  double stage_s = 0;   // one device's roofline time per step
  double comm_s = 0;    // all-reduces, all-gathers, all-to-alls, stage hops and the logits' way to rank 0, per step
  double helix_comm_s = 0;  // of comm_s: Helix's partial-attention all-gathers
  double step_s = 0;    // the inter-token latency
  double tok_s_total() const { return double(batch) / step_s; }
  double tok_s_per_stream() const { return 1.0 / step_s; }
};
// Messages priced by plan_comm_model(in.hw): the measured fits when the hardware has them, else a
// ring all-reduce over the datasheet link with a fixed latency per collective. Ranks that share a
// host (measured over shared memory) each get an even share of its bandwidth, cores and memory.
// Per layer, with tp > 1: an all-reduce of the hidden state after the FFN; after attention an
// all-reduce of it (TP, GQA), nothing (TP, MLA: attention replicated) or the all-gather of
// helix_partial_bytes (Helix).
ParallelDecode parallel_decode(const PlanInputs& in, const ParallelPlan& plan, int64_t batch, int64_t context,
                               double collective_latency_s = 5e-6);
// A prompt through the split model as ridge runs it: `pieces` chunks of equal length (0: ridge's
// default, one per stage and at most 256 tokens each) flow through the stages back to back; stage s
// starts chunk i when it has finished chunk i - 1 and stage s - 1 has sent chunk i. A later chunk
// attends over more positions, so chunks cost more as they go.
struct ParallelPrefill {
  ParallelPlan plan;
  int64_t prompt = 0;
  int64_t pieces = 0;
  double seconds = 0;   // the last stage's end of the last chunk, plus the logits' way to rank 0
  double comm_s = 0;    // the messages on the way (all-gathers / all-reduces, hops), summed
  double helix_comm_s = 0;  // of comm_s: Helix's partial-attention all-gathers
  double tok_s() const { return double(prompt) / seconds; }
};
ParallelPrefill parallel_prefill(const PlanInputs& in, const ParallelPlan& plan, int64_t prompt, int64_t pieces = 0,
                                 double collective_latency_s = 5e-6);
// The hardware's measured communication, or the generic model over its link (memory when it has none).
CommModel plan_comm_model(const HardwareSpec& hw, double collective_latency_s = 5e-6);

// The second seed: tokens each expert's GEMM sees, global concurrency x top-k / experts.
double moe_gemm_m(int64_t global_concurrency, int64_t top_k, int64_t n_expert);

struct TrafficMix {
  double requests_per_s = 1;
  int64_t prompt_tokens = 1024;
  int64_t output_tokens = 256;
  double itl_slo_s = 0.040;
};
struct PoolSizing {
  double prefill_s_per_request = 0;
  double prefill_devices = 0;      // fractional: the load; round up to buy
  int64_t decode_batch = 0;        // per device, inside the ITL SLO and memory
  double decode_tok_s_per_device = 0;
  double decode_devices = 0;
  std::string note;
};
PoolSizing size_disaggregated_pools(const PlanInputs& in, const TrafficMix& mix);

struct SpeculativeDecode {
  double acceptance = 0.7;     // chance each draft token is accepted
  int64_t draft_tokens = 4;    // k proposed per round
  double draft_cost = 0.05;    // one draft step / one target decode step
};
struct SpeculativeResult {
  double tokens_per_round = 0;  // (1 - a^(k+1)) / (1 - a)
  double target_step_s = 0;     // plain decode step
  double verify_step_s = 0;     // target step over k + 1 tokens
  double round_s = 0;
  double speedup = 0;           // tokens per second vs plain decode at the same batch
};
SpeculativeResult speculative_decode(const PlanInputs& in, const SpeculativeDecode& spec, int64_t batch,
                                     int64_t context);

}  // namespace ridge::plan
