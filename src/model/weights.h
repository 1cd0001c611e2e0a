#pragma once
// Views of a model's weights, kept in their stored format (GGUF blocks, f16, bf16, f32):
// kernels dequantize inside the matmul, so nothing is converted at load.
#include <cstdint>
#include <optional>
#include <memory>
#include <vector>

#include "core/dtype.h"
#include "kernels/ref/matmul.h"
#include "model/model_spec.h"

namespace ridge {

// A 2-D weight: `rows` output features, each a contiguous row of `cols` input features
// (GGUF shape [cols, rows]; HF/PyTorch shape [rows, cols]). A 1-D weight has rows == 1.
struct WeightRef {
  DType type = DType::F32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  bool packed = false;  // repacked at load for the CPU kernels (kernels/cpu/packed_layout.h); same bytes per row
  std::optional<DType> recoded_from = std::nullopt;  // the file's type, when re-encoded at load (kernels/ref/recode.h)
  float scale = 1.0f;  // multiplies the matmul's output (NVFP4's per-tensor factor, GGUF "<name>.scale")
  const float* group_scales = nullptr;  // FP8: per row and group of group_cols values (ref::WeightMatrix)
  int64_t group_cols = 0;

  bool present() const { return data != nullptr; }
  int64_t row_bytes() const { return dtype_row_bytes(type, cols); }
  const void* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_bytes(); }
};

inline ref::WeightMatrix as_matrix(const WeightRef& w) {
  return {w.type, w.data, w.rows, w.cols, w.packed, w.scale, w.group_scales, w.group_cols};
}

// One expert's SwiGLU / GeGLU matrices: views into the layer's stacked expert tensors.
struct ExpertWeights {
  WeightRef w_gate, w_up;  // (n_ff_expert, n_embd)
  WeightRef w_down;        // (n_embd, n_ff_expert)
};

struct LayerWeights {
  WeightRef attn_norm;           // (n_embd)
  WeightRef wq, wk, wv;          // (q_dim, n_embd), (kv_dim, n_embd), (kv_dim, n_embd)
  WeightRef bq, bk, bv;          // optional biases (Qwen2): (q_dim), (kv_dim), (kv_dim)
  WeightRef q_norm, k_norm;      // QK-norm: (head_dim) per head, or (q_dim) / (kv_dim) whole
  WeightRef wo;                  // (n_embd, q_dim)
  WeightRef post_attn_norm;      // Gemma 3: (n_embd) on the attention output
  WeightRef ffn_norm;            // (n_embd)
  WeightRef w_gate, w_up;        // dense FFN (n_ff, n_embd)
  WeightRef w_down;              // (n_embd, n_ff)
  WeightRef post_ffn_norm;       // Gemma 3: (n_embd) on the FFN output

  // Mixture of experts (spec.is_moe_layer): a router, the routed experts, and the shared expert
  // (all n_shared_expert of them as one FFN of width spec.shared_ff()).
  WeightRef router;                    // (n_expert, n_embd)
  WeightRef router_bias;               // DeepSeek-V3: (n_expert) added for the choice only
  std::vector<ExpertWeights> experts;  // n_expert
  WeightRef shared_gate, shared_up;    // (shared_ff, n_embd)
  WeightRef shared_down;               // (n_embd, shared_ff)
  WeightRef shared_router;             // Qwen2-MoE: (1, n_embd), sigmoid gate on the shared output

  // Multi-head latent attention (spec.is_mla).
  WeightRef wq_a, q_a_norm, wq_b;  // q_lora_rank > 0: (q_lora_rank, n_embd), (q_lora_rank), (n_head*qk_head, q_lora_rank)
  WeightRef wkv_a;                 // (kv_lora_rank + qk_rope_head_dim, n_embd)
  WeightRef kv_a_norm;             // (kv_lora_rank)
  // Per head (GGUF attn_k_b / attn_v_b, one matrix per head):
  std::vector<WeightRef> wk_b;     // n_head x (kv_lora_rank, qk_nope_head_dim): the query's nope part -> the latent
  std::vector<WeightRef> wv_b;     // n_head x (v_head_dim, kv_lora_rank): the attended latent -> the head's value
};

struct ModelWeights {
  WeightRef token_embd;   // (n_vocab, n_embd)
  WeightRef output_norm;  // (n_embd)
  WeightRef output;       // (n_vocab, n_embd); == token_embd when tied
  WeightRef rope_freqs;   // optional (rope_dim / 2) per-pair frequency divisors (Llama 3 scaling in GGUF)
  std::vector<LayerWeights> layers;
};

// Every weight view of a layer / of the model (present or not), for passes over all of them.
template <typename F>
void for_each_layer_matrix(LayerWeights& l, F&& f) {
  for (WeightRef* r : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down, &l.router, &l.shared_gate,
                       &l.shared_up, &l.shared_down, &l.wq_a, &l.wq_b, &l.wkv_a})
    f(*r);
  for (std::vector<WeightRef>* heads : {&l.wk_b, &l.wv_b})
    for (WeightRef& r : *heads) f(r);
  for (ExpertWeights& e : l.experts)
    for (WeightRef* r : {&e.w_gate, &e.w_up, &e.w_down}) f(*r);
}
template <typename F>
void for_each_weight(ModelWeights& w, F&& f) {
  for (WeightRef* r : {&w.token_embd, &w.output_norm, &w.output, &w.rope_freqs}) f(*r);
  for (LayerWeights& l : w.layers) {
    for (WeightRef* r : {&l.attn_norm, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.post_attn_norm, &l.ffn_norm,
                         &l.post_ffn_norm, &l.router_bias, &l.shared_router, &l.q_a_norm, &l.kv_a_norm})
      f(*r);
    for_each_layer_matrix(l, f);
  }
}

struct ModelShard;

// A loaded model: shapes, weight views, and whatever keeps the bytes alive (a memory map, buffers).
// A rank of a split model (model/shard.h) holds only its shard's weights; spec stays the whole
// model's, and the shard says which part of it the weights are.
struct Model {
  ModelSpec spec;
  ModelWeights weights;
  std::shared_ptr<const void> storage;
  std::shared_ptr<const ModelShard> shard;  // null: the whole model
};

}  // namespace ridge
