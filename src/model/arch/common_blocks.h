#pragma once
// What most architectures share: the hyperparameters every GGUF model has, the tensors of a
// pre-norm attention block, a dense FFN and a MoE FFN, and the layer made of them.
#include <string>

#include "model/arch/architecture.h"

namespace ridge {

// block_count, embedding_length, heads, context, RoPE, norm epsilon, vocabulary, RoPE scaling.
void read_common_hparams(const GgufHparams& h, ModelSpec& s);
// expert_count, expert_used_count, expert_feed_forward_length, expert_shared_count, ... (none: dense).
void read_expert_hparams(const GgufHparams& h, ModelSpec& s);

// "blk.<l>."
std::string layer_prefix(int64_t l);
// attn_norm, attn_q/k/v (+ biases when spec.qkv_bias), attn_q_norm / attn_k_norm (spec.qk_norm),
// attn_output, post_attention_norm (spec.post_norms).
void bind_attention(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w);
// ffn_norm, ffn_gate / ffn_up / ffn_down of width n_ff, post_ffw_norm (spec.post_norms).
void bind_dense_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w);
// ffn_norm, ffn_gate_inp, ffn_{gate,up,down}_exps, the shared expert ffn_*_shexp (and its gate
// ffn_gate_inp_shexp), exp_probs_b.
void bind_moe_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w);
// The FFN of layer l: MoE from n_layer_dense_lead on when the model has experts, else dense.
void bind_ffn(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w);

// attention, then the MoE or the dense FFN.
void standard_layer(LayerPass& pass, const ModelSpec& s, const LayerWeights& w, int64_t l);

// The decoder layer most families share, whose variants are all hyperparameters (QK-norm,
// post-norms, windows, activation, experts): an architecture of this shape only reads them.
class StandardDecoder : public Architecture {
 public:
  void bind_layer(TensorBinder& b, const ModelSpec& s, int64_t l, LayerWeights& w) const override {
    bind_attention(b, s, l, w);
    bind_ffn(b, s, l, w);
  }
  void layer(LayerPass& pass, const ModelSpec& s, const LayerWeights& w, int64_t l) const override {
    standard_layer(pass, s, w, l);
  }
};

}  // namespace ridge
