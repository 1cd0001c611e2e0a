#pragma once
// What one forward pass must move and compute, from the model's real weight types: the numbers
// that turn a measured tok/s into achieved GB/s (decode) or GFLOP/s (prefill).
#include <cstdint>

#include "model/weights.h"

namespace ridge::bench {

struct ModelCost {
  int64_t weight_bytes_per_token = 0;  // every matrix once (the output matrix included: tied
                                       // embeddings are read once, as the output), norms, biases,
                                       // one embedding row for the lookup, and of a MoE layer only
                                       // the n_expert_used experts a token runs (its active parameters)
  int64_t kv_bytes_per_position = 0;   // K and V of one cached position, all layers (read by attention)
  int64_t matmul_params = 0;           // weights multiplied per token (layers and output; active experts)
  int64_t attention_flops_per_position = 0;  // QK and PV per cached position attended, all layers
  int64_t file_weight_bytes = 0;       // all weights as stored (the model's size)
};

ModelCost model_cost(const Model& model);

// Bytes one decode step reads with `context` positions attended (the new token's included).
double decode_bytes_per_token(const ModelCost& cost, double context);

// Average bytes per token over a generation of `n_gen` tokens that starts at cache position `start`.
double generation_bytes_per_token(const ModelCost& cost, int64_t start, int64_t n_gen);

// FLOPs of a prefill of `n_prompt` tokens on an empty cache (causal attention included).
double prefill_flops(const ModelCost& cost, int64_t n_prompt);

}  // namespace ridge::bench
