#include "plan/ragged_cost.h"

#include <algorithm>

namespace ridge::plan {

std::string_view stage_name(Stage s) {
  switch (s) {
    case Stage::Attention: return "attention";
    case Stage::Ffn: return "ffn";
    case Stage::Head: return "head";
  }
  return "?";
}

namespace {
template <typename F>
double sum_stages(const std::array<StageCost, 3>& stages, F field) {
  double t = 0;
  for (const StageCost& s : stages) t += field(s);
  return t;
}
}  // namespace

double RaggedStepCost::flops() const { return sum_stages(stages, [](const StageCost& s) { return s.flops; }); }
double RaggedStepCost::bytes() const { return sum_stages(stages, [](const StageCost& s) { return s.bytes; }); }
double RaggedStepCost::memory_s() const { return sum_stages(stages, [](const StageCost& s) { return s.memory_s; }); }
double RaggedStepCost::compute_s() const {
  return sum_stages(stages, [](const StageCost& s) { return s.gemm_compute_s + s.attention_compute_s; });
}
double RaggedStepCost::roofline_s() const {
  return sum_stages(stages, [](const StageCost& s) { return std::max(s.memory_s, s.gemm_compute_s + s.attention_compute_s); });
}

RaggedCostModel::RaggedCostModel(const ModelSpec& spec, const Precision& precision, const HardwareSpec& hw)
    : spec_(spec), precision_(precision), hw_(hw) {
  for (const Linear& lin : model_linears(spec)) {
    Matrix m;
    m.stage = lin.name.starts_with("attn") ? Stage::Attention : Stage::Ffn;
    m.params = double(lin.n_out) * double(lin.n_in) * double(lin.n_layers);
    m.n_copies = double(lin.n_copies);
    m.n_used = double(lin.n_used);
    m.act_per_row = double(lin.n_in + lin.n_out) * double(lin.n_layers) * precision.activations.bytes();
    matrices_.push_back(m);
  }
  gemm_peak_ = hw.peak(gemm_compute(precision.weights, precision.activations));
  attention_peak_ = hw.peak(precision.activations.compute);
  attention_flops_per_pair_ = attention_flops_per_position(spec) * double(spec.n_layer);
  kv_bytes_per_position_ = kv_bytes_per_token(spec, precision.kv);
  // The attention op's activation traffic per token (queries in, outputs out), as step_cost counts it.
  const StepCost one = step_cost(spec, precision, StepShape{1, 1, 0, false});
  for (const OpCost& op : one.ops) {
    if (op.kind == OpKind::Attention) attention_act_per_token_ = op.act_bytes;
    if (op.name == "output_head") head_params_ = double(op.n) * double(op.k), head_act_per_row_ = op.act_bytes;
    if (op.kind == OpKind::Embedding) embd_bytes_per_token_ = op.bytes();
  }
}

RaggedStepCost RaggedCostModel::cost(std::span<const RunShape> runs) const {
  RaggedStepCost c;
  double pairs = 0, kv_positions = 0, logits = 0;
  for (const RunShape& r : runs) {
    const double n = double(r.n_new), past = double(r.n_past);
    c.tokens += r.n_new;
    pairs += n * past + n * (n + 1) / 2;  // causal: new token i sees past + i + 1 positions
    kv_positions += past + 2 * n;         // the history read, the new positions read and written
    logits += double(r.n_logits);
  }
  const double tokens = double(c.tokens);
  const double bw = hw_.memory_bw > 0 ? hw_.memory_bw : 1;
  auto gemm = [&](StageCost& s, double flops, double bytes) {
    s.flops += flops;
    s.gemm_flops += flops;
    s.bytes += bytes;
  };
  for (const Matrix& m : matrices_) {
    const double rows = tokens * m.n_used;
    double copies_read = 1;
    if (m.n_copies > 1) copies_read = experts_touched(spec_, c.tokens);
    gemm(c.stages[size_t(m.stage)], 2 * rows * m.params,
         m.params * copies_read * precision_.weights.bytes() + rows * m.act_per_row);
  }
  StageCost& attn = c.stages[size_t(Stage::Attention)];
  attn.flops += attention_flops_per_pair_ * pairs;
  attn.bytes += kv_bytes_per_position_ * kv_positions + attention_act_per_token_ * tokens;
  StageCost& head = c.stages[size_t(Stage::Head)];
  if (logits > 0)
    gemm(head, 2 * logits * head_params_, head_params_ * precision_.embeddings.bytes() + logits * head_act_per_row_);
  head.bytes += embd_bytes_per_token_ * tokens;
  for (StageCost& s : c.stages) {
    s.memory_s = s.bytes / bw;
    s.gemm_compute_s = gemm_peak_ > 0 ? s.gemm_flops / gemm_peak_ : 0;
    s.attention_compute_s = attention_peak_ > 0 ? (s.flops - s.gemm_flops) / attention_peak_ : 0;
  }
  return c;
}

}  // namespace ridge::plan
