#pragma once
// The single-device serving analyses of the first seed: machine balance, the single-stream
// ceiling, the KV ledger, decode versus batch, prefill and TTFT, cost per token, the largest batch
// inside a latency SLO, and the quantization table.
#include <cstdint>
#include <vector>

#include "plan/roofline.h"

namespace ridge::plan {

// Everything an analysis reads: the model, its formats, the hardware, learned overheads.
struct PlanInputs {
  ModelSpec spec;
  Precision precision;
  HardwareSpec hw;
  Overheads overheads;
};

struct Balance {
  ComputeClass compute;
  double peak = 0;             // FLOP/s
  double flops_per_byte = 0;   // peak / bandwidth
};
// One row per precision the hardware runs natively (a CPU: f32 and int8).
std::vector<Balance> machine_balance(const HardwareSpec& hw);

struct DecodePoint {
  int64_t batch = 1;
  int64_t context = 0;  // cached tokens per sequence
  StepCost cost;
  StepTime time;
  double tok_s_total() const { return double(batch) / time.seconds; }
  double tok_s_per_stream() const { return 1.0 / time.seconds; }
};
DecodePoint decode_point(const PlanInputs& in, int64_t batch, int64_t context);

struct PrefillPoint {
  int64_t prompt = 0;
  StepCost cost;
  StepTime time;             // also the time to first token (the prefill's logits give it)
  double tok_s() const { return double(prompt) / time.seconds; }
  double weight_intensity() const { return cost.flops() / cost.weight_bytes(); }  // the seed's 2N
};
PrefillPoint prefill_point(const PlanInputs& in, int64_t prompt);

struct KvLedger {
  int64_t context = 0;
  double bytes_per_token = 0;
  double bytes_per_sequence = 0;
  double weight_bytes = 0;
  double free_bytes = 0;       // memory of n_devices left after the weights
  int64_t max_sequences = 0;   // at this context
};
KvLedger kv_ledger(const PlanInputs& in, int64_t context, int64_t n_devices = 1);

// USD per million output tokens at `tok_s` on a device that costs `price_per_hour`.
double cost_per_million_tokens(double price_per_hour, double tok_s);

// Smallest batch at which a decode step is compute-bound (the seed's balance / 2, KV included).
// 0 when it never turns within `max_batch`.
int64_t decode_crossover_batch(const PlanInputs& in, int64_t context, int64_t max_batch = 1 << 16);

struct SloBatch {
  int64_t batch = 0;         // the answer: 0 when even batch 1 misses the SLO or does not fit
  int64_t memory_limit = 0;  // most sequences whose KV fits
  bool slo_bound = false;    // the SLO, not memory, stopped the search
  DecodePoint point;         // at `batch` (batch 1 when the answer is 0)
};
SloBatch largest_batch_within_slo(const PlanInputs& in, double itl_s, int64_t context, int64_t n_devices = 1);

struct QuantRow {
  NumberFormat format;
  double weight_bytes = 0;
  int64_t devices_needed = 0;   // to hold the weights alone
  double ceiling_tok_s = 0;     // one stream on one device's bandwidth, no KV (the seed's table)
};
// Every matrix (embeddings too) in each format, as the first seed's table assumes.
std::vector<QuantRow> quantization_table(const PlanInputs& in, const std::vector<NumberFormat>& formats);

}  // namespace ridge::plan
