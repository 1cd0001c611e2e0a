#include "plan/serving.h"

#include <cmath>

namespace ridge::plan {

std::vector<Balance> machine_balance(const HardwareSpec& hw) {
  std::vector<Balance> out;
  const std::pair<ComputeClass, double> native[] = {{ComputeClass::F32, hw.peak_f32},   {ComputeClass::BF16, hw.peak_bf16},
                                                    {ComputeClass::FP8, hw.peak_fp8},   {ComputeClass::INT8, hw.peak_int8},
                                                    {ComputeClass::FP4, hw.peak_fp4}};
  for (const auto& [c, peak] : native)
    if (peak > 0) out.push_back({c, peak, peak / hw.memory_bw});
  return out;
}

DecodePoint decode_point(const PlanInputs& in, int64_t batch, int64_t context) {
  DecodePoint p;
  p.batch = batch;
  p.context = context;
  p.cost = step_cost(in.spec, in.precision, {.n_seq = batch, .n_new = 1, .n_past = context});
  p.time = step_time(p.cost, in.hw, in.overheads);
  return p;
}

PrefillPoint prefill_point(const PlanInputs& in, int64_t prompt) {
  PrefillPoint p;
  p.prompt = prompt;
  p.cost = step_cost(in.spec, in.precision, {.n_seq = 1, .n_new = prompt, .n_past = 0});
  p.time = step_time(p.cost, in.hw, in.overheads);
  return p;
}

KvLedger kv_ledger(const PlanInputs& in, int64_t context, int64_t n_devices) {
  KvLedger k;
  k.context = context;
  k.bytes_per_token = kv_bytes_per_token(in.spec, in.precision.kv);
  k.bytes_per_sequence = k.bytes_per_token * double(context);
  k.weight_bytes = weight_bytes(in.spec, in.precision);
  k.free_bytes = std::max(0.0, in.hw.memory_bytes * double(n_devices) - k.weight_bytes);
  k.max_sequences = k.bytes_per_sequence > 0 ? int64_t(k.free_bytes / k.bytes_per_sequence) : 0;
  return k;
}

double cost_per_million_tokens(double price_per_hour, double tok_s) { return price_per_hour / (tok_s * 3600.0) * 1e6; }

int64_t decode_crossover_batch(const PlanInputs& in, int64_t context, int64_t max_batch) {
  auto compute_bound = [&](int64_t b) {
    const StepTime t = decode_point(in, b, context).time;
    return t.compute_s > t.memory_s;
  };
  if (!compute_bound(max_batch)) return 0;
  int64_t lo = 1, hi = max_batch;  // compute-bound at hi; find the first such batch
  if (compute_bound(lo)) return lo;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (compute_bound(mid) ? hi : lo) = mid;
  }
  return hi;
}

SloBatch largest_batch_within_slo(const PlanInputs& in, double itl_s, int64_t context, int64_t n_devices) {
  SloBatch r;
  r.memory_limit = kv_ledger(in, std::max<int64_t>(context, 1), n_devices).max_sequences;
  auto meets = [&](int64_t b) { return decode_point(in, b, context).time.seconds <= itl_s; };
  // Step time grows with batch, so the feasible batches are 1..answer.
  r.point = decode_point(in, 1, context);
  if (r.memory_limit < 1 || !meets(1)) {
    r.slo_bound = r.memory_limit >= 1;
    return r;
  }
  int64_t lo = 1, hi = r.memory_limit;
  if (meets(hi)) {
    lo = hi;
  } else {
    r.slo_bound = true;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (meets(mid) ? lo : hi) = mid;
    }
  }
  r.batch = lo;
  r.point = decode_point(in, lo, context);
  return r;
}

std::vector<QuantRow> quantization_table(const PlanInputs& in, const std::vector<NumberFormat>& formats) {
  std::vector<QuantRow> rows;
  for (const auto& f : formats) {
    PlanInputs q = in;
    q.precision.weights = f;
    q.precision.embeddings = f;
    QuantRow row;
    row.format = f;
    row.weight_bytes = weight_bytes(q.spec, q.precision);
    row.devices_needed = in.hw.memory_bytes > 0 ? int64_t(std::ceil(row.weight_bytes / in.hw.memory_bytes)) : 0;
    row.ceiling_tok_s = decode_point(q, 1, 0).tok_s_total();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ridge::plan
