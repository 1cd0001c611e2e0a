#include "plan/cost_model.h"

#include <cmath>

namespace ridge::plan {
namespace {

void add_attention_linears(const ModelSpec& s, std::vector<Linear>& out) {
  const int64_t L = s.n_layer;
  if (!s.is_mla()) {
    out.push_back({"attn_qkv", s.q_dim() + 2 * s.kv_dim(), s.n_embd, L});
    out.push_back({"attn_out", s.n_embd, s.q_dim(), L});
    return;
  }
  // MLA: queries through an optional low-rank bottleneck; keys and values from one shared latent.
  const int64_t q_head = s.qk_nope_head_dim + s.qk_rope_head_dim;
  if (s.q_lora_rank > 0) {
    out.push_back({"attn_q_a", s.q_lora_rank, s.n_embd, L});
    out.push_back({"attn_q_b", s.n_head * q_head, s.q_lora_rank, L});
  } else {
    out.push_back({"attn_q", s.n_head * q_head, s.n_embd, L});
  }
  out.push_back({"attn_kv_a", s.kv_lora_rank + s.qk_rope_head_dim, s.n_embd, L});
  // Absorbed into the query and output sides at decode; same parameters and FLOPs per token.
  out.push_back({"attn_kv_b", s.n_head * (s.qk_nope_head_dim + s.v_head_dim), s.kv_lora_rank, L});
  out.push_back({"attn_out", s.n_embd, s.n_head * s.v_head_dim, L});
}

void add_ffn_linears(const ModelSpec& s, std::vector<Linear>& out) {
  const int64_t dense_layers = s.is_moe() ? s.n_layer_dense_lead : s.n_layer;
  if (dense_layers > 0) {
    out.push_back({"ffn_gate_up", 2 * s.n_ff, s.n_embd, dense_layers});
    out.push_back({"ffn_down", s.n_embd, s.n_ff, dense_layers});
  }
  if (!s.is_moe()) return;
  const int64_t moe_layers = s.n_layer - s.n_layer_dense_lead;
  out.push_back({"moe_router", s.n_expert, s.n_embd, moe_layers});
  if (s.n_shared_expert > 0) {
    const int64_t shared_ff = s.shared_ff();
    out.push_back({"shared_gate_up", 2 * shared_ff, s.n_embd, moe_layers});
    out.push_back({"shared_down", s.n_embd, shared_ff, moe_layers});
  }
  out.push_back({"expert_gate_up", 2 * s.n_ff_expert, s.n_embd, moe_layers, s.n_expert, s.n_expert_used});
  out.push_back({"expert_down", s.n_embd, s.n_ff_expert, moe_layers, s.n_expert, s.n_expert_used});
}

}  // namespace

double attention_flops_per_position(const ModelSpec& s) {
  if (s.is_mla()) {
    // Absorbed MLA: scores over latent + RoPE key, values summed in the latent space.
    return double(s.n_head) * (2.0 * double(s.kv_lora_rank + s.qk_rope_head_dim) + 2.0 * double(s.kv_lora_rank));
  }
  return 4.0 * double(s.n_head) * double(s.head_dim);
}

namespace {

OpCost linear_cost(const Linear& lin, const Precision& p, const StepShape& shape, const ModelSpec& spec) {
  const double tokens = double(shape.tokens());
  OpCost op;
  op.name = lin.name;
  op.n_layers = lin.n_layers;
  op.n = lin.n_out;
  op.k = lin.n_in;
  op.compute = gemm_compute(p.weights, p.activations);
  const double matrix = double(lin.n_out) * double(lin.n_in);
  const double rows = tokens * double(lin.n_used);  // token-expert pairs through this matrix
  double copies_read = 1;
  if (lin.routed()) {
    copies_read = experts_touched(spec, shape.tokens());
    op.m = int64_t(std::ceil(rows / double(lin.n_copies)));  // tokens per expert, uniform routing
  } else {
    op.m = shape.tokens();
  }
  op.flops = 2.0 * rows * matrix * double(lin.n_layers);
  op.weight_bytes = matrix * copies_read * p.weights.bytes() * double(lin.n_layers);
  op.act_bytes = rows * double(lin.n_in + lin.n_out) * p.activations.bytes() * double(lin.n_layers);
  return op;
}

OpCost attention_cost(const ModelSpec& s, const Precision& p, const StepShape& shape) {
  OpCost op;
  op.name = "attention";
  op.kind = OpKind::Attention;
  op.n_layers = s.n_layer;
  op.compute = p.activations.compute;
  const double n_new = double(shape.n_new), n_past = double(shape.n_past), n_seq = double(shape.n_seq);
  // Causal: new token i (0-based) sees n_past + i + 1 positions.
  const double positions_seen = n_seq * (n_new * n_past + n_new * (n_new + 1) / 2);
  op.flops = attention_flops_per_position(s) * positions_seen * double(s.n_layer);
  const double kv_token_layer = double(kv_elements_per_token_layer(s)) * p.kv.bytes();
  const double kv_read = n_seq * (n_past + n_new) * kv_token_layer;
  const double kv_write = n_seq * n_new * kv_token_layer;
  op.kv_bytes = (kv_read + kv_write) * double(s.n_layer);
  const int64_t q_width = s.is_mla() ? s.n_head * (s.qk_nope_head_dim + s.qk_rope_head_dim) : s.q_dim();
  const int64_t out_width = s.is_mla() ? s.n_head * s.v_head_dim : s.q_dim();
  op.act_bytes = double(shape.tokens()) * double(q_width + out_width) * p.activations.bytes() * double(s.n_layer);
  return op;
}

OpCost output_head_cost(const ModelSpec& s, const Precision& p, const StepShape& shape) {
  OpCost op;
  op.name = "output_head";
  op.m = shape.all_logits ? shape.tokens() : shape.n_seq;
  op.n = s.n_vocab;
  op.k = s.n_embd;
  op.compute = gemm_compute(p.embeddings, p.activations);
  const double matrix = double(s.n_vocab) * double(s.n_embd);
  op.flops = 2.0 * double(op.m) * matrix;
  op.weight_bytes = matrix * p.embeddings.bytes();
  op.act_bytes = double(op.m) * double(s.n_embd + s.n_vocab) * p.activations.bytes();
  return op;
}

OpCost embedding_cost(const ModelSpec& s, const Precision& p, const StepShape& shape) {
  OpCost op;
  op.name = "token_embd";
  op.kind = OpKind::Embedding;
  const double rows = double(shape.tokens()) * double(s.n_embd);
  op.weight_bytes = rows * p.embeddings.bytes();  // only the rows of this step's tokens
  op.act_bytes = rows * p.activations.bytes();
  return op;
}

template <typename F>
double sum(const std::vector<OpCost>& ops, F field) {
  double total = 0;
  for (const auto& op : ops) total += field(op);
  return total;
}

}  // namespace

std::vector<Linear> model_linears(const ModelSpec& spec) {
  std::vector<Linear> out;
  add_attention_linears(spec, out);
  add_ffn_linears(spec, out);
  return out;
}

ParamCount param_count(const ModelSpec& spec) {
  ParamCount c;
  for (const auto& lin : model_linears(spec)) {
    c.layers += lin.params();
    c.layers_active += double(lin.n_out) * double(lin.n_in) * double(lin.n_layers) * double(lin.n_used);
  }
  c.token_embedding = double(spec.n_vocab) * double(spec.n_embd);
  c.output_head = spec.tied_embeddings ? 0 : c.token_embedding;
  return c;
}

double weight_bytes(const ModelSpec& spec, const Precision& precision) {
  const ParamCount c = param_count(spec);
  return c.layers * precision.weights.bytes() + (c.token_embedding + c.output_head) * precision.embeddings.bytes();
}

int64_t kv_elements_per_token_layer(const ModelSpec& spec) {
  if (spec.is_mla()) return spec.kv_lora_rank + spec.qk_rope_head_dim;
  return 2 * spec.kv_dim();
}

double kv_bytes_per_token(const ModelSpec& spec, const NumberFormat& kv) {
  return double(kv_elements_per_token_layer(spec)) * double(spec.n_layer) * kv.bytes();
}

double experts_touched(const ModelSpec& spec, int64_t tokens) {
  if (!spec.is_moe()) return 0;
  const double e = double(spec.n_expert), k = double(spec.n_expert_used);
  return e * (1.0 - std::pow(1.0 - k / e, double(tokens)));
}

double StepCost::flops() const { return sum(ops, [](const OpCost& o) { return o.flops; }); }
double StepCost::bytes() const { return sum(ops, [](const OpCost& o) { return o.bytes(); }); }
double StepCost::weight_bytes() const { return sum(ops, [](const OpCost& o) { return o.weight_bytes; }); }
double StepCost::kv_bytes() const { return sum(ops, [](const OpCost& o) { return o.kv_bytes; }); }
double StepCost::act_bytes() const { return sum(ops, [](const OpCost& o) { return o.act_bytes; }); }

StepCost step_cost(const ModelSpec& spec, const Precision& precision, const StepShape& shape) {
  StepCost cost;
  cost.shape = shape;
  cost.ops.push_back(embedding_cost(spec, precision, shape));
  for (const auto& lin : model_linears(spec)) {
    cost.ops.push_back(linear_cost(lin, precision, shape, spec));
    // Attention sits between the input projections and the output projection.
    if (lin.name == "attn_qkv" || lin.name == "attn_kv_b") cost.ops.push_back(attention_cost(spec, precision, shape));
  }
  cost.ops.push_back(output_head_cost(spec, precision, shape));
  return cost;
}

}  // namespace ridge::plan
