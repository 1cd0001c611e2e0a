#include "bench/decode_cost.h"

#include <vector>

#include "model/kv_shape.h"

namespace ridge::bench {
namespace {

int64_t bytes_of(const WeightRef& w) { return w.present() ? w.rows * w.row_bytes() : 0; }
int64_t params_of(const WeightRef& w) { return w.present() ? w.rows * w.cols : 0; }

}  // namespace

ModelCost model_cost(const Model& model) {
  const ModelSpec& s = model.spec;
  const ModelWeights& w = model.weights;
  ModelCost c;
  int64_t inactive_expert_bytes = 0;  // stored but not read by one token's decode
  for (const LayerWeights& l : w.layers) {
    std::vector<const WeightRef*> matrices = {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down, &l.router,
                                              &l.shared_gate, &l.shared_up, &l.shared_down, &l.shared_router,
                                              &l.wq_a, &l.wq_b, &l.wkv_a};
    for (const std::vector<WeightRef>* heads : {&l.wk_b, &l.wv_b})
      for (const WeightRef& h : *heads) matrices.push_back(&h);
    for (const WeightRef* m : matrices) {
      c.weight_bytes_per_token += bytes_of(*m);
      c.matmul_params += params_of(*m);
    }
    for (const WeightRef* v : {&l.attn_norm, &l.ffn_norm, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.post_attn_norm,
                               &l.post_ffn_norm, &l.q_a_norm, &l.kv_a_norm})
      c.weight_bytes_per_token += bytes_of(*v);
    // A token reads n_expert_used experts of a MoE layer (which ones varies; their sizes do not).
    for (size_t e = 0; e < l.experts.size(); ++e) {
      int64_t bytes = 0;
      for (const WeightRef* m : {&l.experts[e].w_gate, &l.experts[e].w_up, &l.experts[e].w_down}) {
        bytes += bytes_of(*m);
        if (int64_t(e) < s.n_expert_used) c.matmul_params += params_of(*m);
      }
      if (int64_t(e) < s.n_expert_used) c.weight_bytes_per_token += bytes;
      else inactive_expert_bytes += bytes;
    }
  }
  c.weight_bytes_per_token += bytes_of(w.output) + bytes_of(w.output_norm) + w.token_embd.row_bytes();
  c.matmul_params += params_of(w.output);
  c.file_weight_bytes = c.weight_bytes_per_token - w.token_embd.row_bytes() + (s.tied_embeddings ? 0 : bytes_of(w.token_embd)) +
                        inactive_expert_bytes;
  c.kv_bytes_per_position = kv_layout_of(s, 1, 1, KvDtype::F16).bytes_per_token_per_layer() * s.n_layer;
  // q·k and p·v, a multiply-add each; MLA's heads dot [latent | rope key] and weight the latent.
  const int64_t per_head = s.is_mla() ? 2 * s.kv_lora_rank + s.qk_rope_head_dim : 2 * s.head_dim;
  c.attention_flops_per_position = 2 * s.n_layer * s.n_head * per_head;
  return c;
}

double decode_bytes_per_token(const ModelCost& cost, double context) {
  return double(cost.weight_bytes_per_token) + double(cost.kv_bytes_per_position) * context;
}

double generation_bytes_per_token(const ModelCost& cost, int64_t start, int64_t n_gen) {
  // Step i attends start + i + 1 positions; the mean over i = 0..n_gen-1 is start + (n_gen + 1) / 2.
  return decode_bytes_per_token(cost, double(start) + double(n_gen + 1) / 2.0);
}

double prefill_flops(const ModelCost& cost, int64_t n_prompt) {
  const double n = double(n_prompt);
  const double attended = n * (n + 1) / 2;  // token i attends i + 1 positions
  return 2.0 * double(cost.matmul_params) * n + double(cost.attention_flops_per_position) * attended;
}

}  // namespace ridge::bench
