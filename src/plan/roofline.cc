#include "plan/roofline.h"

#include <algorithm>

namespace ridge::plan {

OpTime op_time(const OpCost& op, const HardwareSpec& hw) {
  OpTime t;
  t.memory_s = op.bytes() / hw.memory_bw;
  t.compute_s = op.flops > 0 ? op.flops / hw.peak(op.compute) : 0;
  return t;
}

StepTime step_time(const StepCost& cost, const HardwareSpec& hw, const Overheads& overheads) {
  StepTime t;
  for (const auto& op : cost.ops) {
    const OpTime ot = op_time(op, hw);
    t.seconds += ot.seconds();
    t.memory_s += ot.memory_s;
    t.compute_s += ot.compute_s;
  }
  t.overhead_s = overheads.per_step_s + overheads.per_token_s * double(cost.shape.tokens());
  t.seconds += t.overhead_s;
  return t;
}

double closed_form_step_seconds(const DecodeTotals& totals, int64_t batch, int64_t context, double bandwidth,
                                double peak) {
  const double bytes = totals.weight_bytes + double(batch) * double(context) * totals.kv_bytes_per_token;
  const double flops = double(batch) * totals.flops_per_token;
  return std::max(bytes / bandwidth, flops / peak);
}

}  // namespace ridge::plan
