#pragma once
// A snapshot of the engine's counters and gauges (what /metrics and the batch report show).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kv/kv_tiers.h"

namespace ridge {

// Upper bounds (seconds) of the token-mask time histogram, 10 us to 100 ms; one more bucket is +Inf.
inline constexpr std::array<double, 13> kGrammarMaskBuckets = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
                                                               2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 1e-1};

// Upper bounds (seconds) of the KV transfer time histogram, 1 ms to 30 s.
inline constexpr std::array<double, 14> kKvTransferBuckets = {1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1,
                                                              0.25, 0.5, 1, 2.5, 5, 10, 30};

// Upper bounds of the per-transfer KV histograms: bytes (64 KiB to 4 GiB, by 4) and achieved
// bytes per second while streaming (10 MB/s to 64 GB/s).
inline constexpr std::array<double, 9> kKvBytesBuckets = {65536, 262144, 1048576, 4194304, 16777216,
                                                          67108864, 268435456, 1073741824, 4294967296};
inline constexpr std::array<double, 12> kKvBandwidthBuckets = {1e7, 3e7, 1e8, 3e8, 1e9, 2e9,
                                                               4e9, 8e9, 16e9, 24e9, 32e9, 64e9};

// Counts per bucket (not cumulative) and the sum, for a Prometheus histogram.
// Upper bounds of the per-step roofline histograms: the fraction of the probed bandwidth or compute
// peak a stage achieved (a step's bytes / seconds / bandwidth). Above 1: the cost model counted
// traffic the caches absorbed.
inline constexpr std::array<double, 12> kRooflineFractionBuckets = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5,
                                                                    0.6, 0.7, 0.8, 0.9, 1.0, 1.25};

template <size_t N>
struct BucketCounts {
  std::array<int64_t, N + 1> counts{};
  double sum = 0;
  void add(const std::array<double, N>& bounds, double v) {
    ++counts[size_t(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin())];
    sum += v;
  }
};

// One step on the roofline chart: its FLOPs and bytes as the cost model counts them, its time.
struct StepRooflinePoint {
  double seconds = 0;
  double flops = 0;
  double bytes = 0;
  int64_t tokens = 0;
  int64_t decode_tokens = 0;  // of tokens, single decode positions (the rest: prefill and drafts)
  double predicted_s = 0;     // the step model's prediction before the step ran
};

// The roofline accounting and the latency objectives' guard (slo/), when the engine has a governor.
struct SloStats {
  bool enabled = false;
  double memory_bw = 0, gemm_peak = 0;  // the machine's limits the fractions are of
  bool measured_machine = false;        // the limits came from `ridge probe` (else a placeholder)
  using FractionHistogram = BucketCounts<kRooflineFractionBuckets.size()>;
  std::array<FractionHistogram, 3> stage_bandwidth;  // attention, ffn, head
  std::array<FractionHistogram, 3> stage_compute;
  FractionHistogram step_bandwidth, step_compute;
  FractionHistogram decode_step_bandwidth;        // steps that only decode
  int64_t decode_steps = 0;
  double decode_step_bytes = 0, decode_step_seconds = 0;
  std::array<double, 3> stage_bytes{}, stage_flops{}, stage_seconds{};  // totals since start
  std::vector<StepRooflinePoint> recent;          // the last steps, oldest first
  std::array<double, 4> coefficients{};           // the step model's fit (slo/step_model.h)
  double model_error = 0;                         // mean relative error of its predictions, recent steps
  // The guard.
  double step_bound_s = 0, decode_bound_s = 0;
  int32_t running_cap = 0;                        // 0: no cap beyond max_num_seqs
  int64_t cascades = 0;
  int64_t held_tokens = 0;                        // prompt positions deferred to keep a step in bound
  int64_t held_admissions = 0;
  int64_t ttft_unmeetable = 0;                    // requests still queued past the TTFT objective
  int64_t ttft_rejected = 0;                      // refused at submit (slo_reject)
  double ttft_s = 0;
};

struct EngineStats {
  // Gauges.
  int64_t running = 0;        // sequences in the running batch
  int64_t waiting = 0;        // queued, not yet admitted (or preempted)
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_used = 0;
  int64_t last_batch_tokens = 0;  // tokens in the last step
  int64_t last_batch_seqs = 0;    // sequences in the last step
  // Counters since start.
  int64_t steps = 0;
  double step_seconds = 0;        // total time inside steps
  int64_t prefix_query_tokens = 0;
  int64_t prefix_hit_tokens = 0;
  int64_t preemptions = 0;
  int64_t evictions = 0;
  int64_t tokens_prefilled = 0;   // prompt and recomputed tokens run through the model
  int64_t tokens_decoded = 0;
  int64_t prompt_tokens = 0;      // of finished and running requests, as submitted
  int64_t generated_tokens = 0;
  int64_t requests_finished_stop = 0;
  int64_t requests_finished_length = 0;
  int64_t requests_aborted = 0;
  // Structured output.
  int64_t grammar_requests = 0;       // submitted with a grammar
  int64_t grammar_masks = 0;          // token masks computed
  double grammar_mask_seconds = 0;    // their total time (on the mask worker, beside the forward pass)
  double grammar_mask_max_seconds = 0;
  std::array<int64_t, kGrammarMaskBuckets.size() + 1> grammar_mask_histogram{};  // masks per bucket (not cumulative)
  int64_t grammar_forced_tokens = 0;  // appended by jump-forward without sampling
  int64_t grammar_dead_ends = 0;      // requests ended because the grammar allowed no token
  // Speculative decoding (vLLM's spec_decode_* names).
  int64_t spec_drafts = 0;            // verify runs: a request's decode with its draft tokens
  int64_t spec_draft_tokens = 0;      // draft tokens verified
  int64_t spec_accepted_tokens = 0;   // ... and kept
  std::array<int64_t, 16> spec_accepted_per_pos{};  // kept, by position in the draft (0: the first)
  // Disaggregated decode: prompts prefilled by another instance.
  int64_t awaiting_remote = 0;          // gauge: requests waiting for their K/V
  int64_t remote_prefills = 0;          // transfers finished well
  int64_t remote_prefill_failures = 0;  // failed or timed out: computed here instead (re-prefills)
  int64_t kv_tokens_received = 0;       // prompt positions whose K/V arrived
  int64_t kv_bytes_received = 0;
  BucketCounts<kKvBytesBuckets.size()> kv_received_bytes_histogram;  // per transfer
  double kv_transfer_seconds = 0;       // sum over the finished transfers (request to last byte)
  std::array<int64_t, kKvTransferBuckets.size() + 1> kv_transfer_histogram{};
  int64_t kv_blocks_quarantined = 0;    // gauge: blocks held until a failed transfer can no longer write
  // Tiered KV cache (kv/kv_tiers): prefix blocks below the pool.
  bool kv_tiers = false;
  int64_t tier_loads = 0, tier_load_failures = 0, tier_tokens_loaded = 0, tier_bytes_loaded = 0;
  int64_t tier_blocks_offloaded = 0;  // evicted from the pool into the tiers
  KvTiers::Stats tier;                // the tiers' own counters and gauges
  // Disaggregated prefill: prompts whose K/V this instance sent.
  int64_t kv_transfers_sent = 0;
  int64_t kv_send_failures = 0;
  int64_t kv_bytes_sent = 0;
  BucketCounts<kKvBytesBuckets.size()> kv_sent_bytes_histogram;              // per transfer
  BucketCounts<kKvBandwidthBuckets.size()> kv_send_bandwidth_histogram;      // bytes / stream seconds
  BucketCounts<kKvTransferBuckets.size()> kv_send_exposed_histogram;         // seconds not hidden by compute
  // Mixture of experts: tokens routed to each expert, summed over the MoE layers (empty: dense).
  std::vector<uint64_t> moe_expert_tokens;
  double moe_layer_imbalance = 0;  // the hottest expert's tokens over the mean, worst layer
  // Expert parallelism: tokens the experts of each rank of the group received (empty: not split).
  std::vector<uint64_t> moe_rank_tokens;
  SloStats slo;
};

}  // namespace ridge
