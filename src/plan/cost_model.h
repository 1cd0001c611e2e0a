#pragma once
// The model cost model: for one forward step over a batch, the FLOPs, weight bytes, KV bytes and
// activation bytes of each op, counted from ModelSpec alone. Dense Llama-family models, GQA,
// mixture of experts (routed top-k plus shared experts) and multi-head latent attention.
//
// Assumptions, stated once: each weight matrix is read from memory once per step and shared by all
// tokens in it; attention reads each sequence's whole KV history once per layer (FlashAttention
// style, no N x N scores in memory); GEMMs read their input and write their output activations;
// norms, RoPE and elementwise ops are fused away. MoE routing is uniform.
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "plan/number_format.h"

namespace ridge::plan {

struct Precision {
  NumberFormat weights = number_format("bf16");      // layer matrices
  NumberFormat embeddings = number_format("bf16");   // token embedding table and output head
  NumberFormat kv = number_format("bf16");           // KV cache
  NumberFormat activations = number_format("bf16");  // GEMM inputs and outputs
};

// One forward step: n_seq sequences, each adding n_new tokens after n_past cached ones.
// Decode is n_new = 1; a prefill of a prompt is n_past = 0, n_new = prompt length.
struct StepShape {
  int64_t n_seq = 1;
  int64_t n_new = 1;
  int64_t n_past = 0;
  bool all_logits = false;  // output head on every new token, not only each sequence's last

  int64_t tokens() const { return n_seq * n_new; }
};

// One weight matrix of a layer, as a GEMM: N = n_out, K = n_in (M is the token count).
struct Linear {
  std::string name;      // "attn_qkv", "ffn_down", "expert_gate_up", ...
  int64_t n_out = 0;     // GEMM N
  int64_t n_in = 0;      // GEMM K
  int64_t n_layers = 0;  // layers that hold it
  int64_t n_copies = 1;  // per layer: routed experts hold n_expert copies
  int64_t n_used = 1;    // copies each token passes through (top-k for routed experts)
  bool routed() const { return n_copies > 1; }
  double params() const { return double(n_out) * double(n_in) * double(n_layers) * double(n_copies); }
};
// The layer matrices, fused as engines run them (Q/K/V together, gate and up together).
std::vector<Linear> model_linears(const ModelSpec& spec);

struct ParamCount {
  double layers = 0;          // all layer matrices
  double layers_active = 0;   // what one token passes through
  double token_embedding = 0;
  double output_head = 0;     // 0 when tied to the embedding
  double total() const { return layers + token_embedding + output_head; }
  // Per token, embedding row lookup and output head included (the way MoE papers count "active").
  double active() const { return layers_active + token_embedding + output_head; }
};
ParamCount param_count(const ModelSpec& spec);

// Stored weight bytes: layer matrices in precision.weights, embedding and head in .embeddings.
double weight_bytes(const ModelSpec& spec, const Precision& precision);

// KV cache elements per token per layer: 2 x kv_dim (K and V), or one latent + one RoPE key (MLA).
int64_t kv_elements_per_token_layer(const ModelSpec& spec);
double kv_bytes_per_token(const ModelSpec& spec, const NumberFormat& kv);

enum class OpKind { Gemm, Attention, Embedding };

struct OpCost {
  std::string name;
  OpKind kind = OpKind::Gemm;
  int64_t n_layers = 1;             // layers this row sums over
  int64_t m = 0, n = 0, k = 0;      // GEMM shape (per layer; per expert for routed experts)
  ComputeClass compute = ComputeClass::BF16;
  double flops = 0;                 // totals over n_layers
  double weight_bytes = 0;
  double kv_bytes = 0;
  double act_bytes = 0;

  double bytes() const { return weight_bytes + kv_bytes + act_bytes; }
  double intensity() const { return bytes() > 0 ? flops / bytes() : 0; }
};

struct StepCost {
  StepShape shape;
  std::vector<OpCost> ops;

  double flops() const;
  double bytes() const;
  double weight_bytes() const;
  double kv_bytes() const;
  double act_bytes() const;
};

StepCost step_cost(const ModelSpec& spec, const Precision& precision, const StepShape& shape);

// Query-key dot products plus value sums per query token and cached position, all heads, one layer.
double attention_flops_per_position(const ModelSpec& spec);

// Routed experts a step of `tokens` tokens touches on average: E (1 - (1 - k/E)^tokens).
double experts_touched(const ModelSpec& spec, int64_t tokens);

}  // namespace ridge::plan
