#pragma once
// A BERT-family encoder (all-MiniLM, BGE, E5, ...): absolute position and token-type embeddings,
// post-norm layers (LayerNorm after each residual add) with GELU, bidirectional attention. Loaded
// from a Hugging Face BertModel checkpoint (config.json + safetensors) or the GGUF `bert` layout
// llama.cpp's converter writes; either way the weights are views in their stored type, like the
// decoders' (model/weights.h), so the same CPU matmul runs them.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/weights.h"

namespace ridge {

namespace gguf {
class GgufFile;
}

struct EncoderSpec {
  std::string arch = "bert";
  std::string name;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_layer = 0;
  int64_t n_ff = 0;
  int64_t n_positions = 0;    // max_position_embeddings: the longest text
  int64_t n_token_types = 0;  // type_vocab_size (segment embeddings; 0: none)
  float norm_eps = 1e-12f;
  int64_t head_dim() const { return n_embd / n_head; }
};

struct EncoderLayerWeights {
  WeightRef wq, wk, wv, wo;        // (n_embd, n_embd)
  WeightRef bq, bk, bv, bo;        // (n_embd)
  WeightRef attn_norm, attn_norm_b;  // LayerNorm after the attention's residual add
  WeightRef w_up, b_up;            // (n_ff, n_embd), (n_ff)
  WeightRef w_down, b_down;        // (n_embd, n_ff), (n_embd)
  WeightRef ffn_norm, ffn_norm_b;  // LayerNorm after the FFN's residual add
};

struct EncoderWeights {
  WeightRef token_embd;     // (n_vocab, n_embd)
  WeightRef position_embd;  // (n_positions, n_embd)
  WeightRef token_types;    // (n_token_types, n_embd), or absent
  WeightRef embd_norm, embd_norm_b;
  std::vector<EncoderLayerWeights> layers;
};

struct EncoderModel {
  EncoderSpec spec;
  EncoderWeights weights;
  std::shared_ptr<const void> storage;  // whatever keeps the bytes alive
};

// Every weight view (present or not), for passes over all of them (re-encoding at load).
template <typename F>
void for_each_encoder_weight(EncoderWeights& w, F&& f) {
  for (WeightRef* r : {&w.token_embd, &w.position_embd, &w.token_types, &w.embd_norm, &w.embd_norm_b}) f(*r);
  for (EncoderLayerWeights& l : w.layers)
    for (WeightRef* r : {&l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.bo, &l.attn_norm, &l.attn_norm_b, &l.w_up,
                         &l.b_up, &l.w_down, &l.b_down, &l.ffn_norm, &l.ffn_norm_b})
      f(*r);
}

// Binds every weight of the spec's shapes through matrix(name, rows, cols) and vector(name, n), the
// names in GGUF's spelling ("token_embd.weight", "blk.3.attn_q.bias"); a loader of another layout
// maps them to its own (bert_hf_name).
void bind_encoder_weights(const EncoderSpec& spec, EncoderWeights& w,
                          const std::function<WeightRef(const std::string& name, int64_t rows, int64_t cols)>& matrix,
                          const std::function<WeightRef(const std::string& name, int64_t n)>& vector);
// The Hugging Face BertModel name of a tensor named as above ("encoder.layer.3.attention.self.query.bias").
std::string bert_hf_name(const std::string& gguf_name);

// A Hugging Face BertModel directory (config.json model_type "bert"; tensors named "embeddings.*",
// "encoder.layer.N.*", with or without a "bert." prefix). Error naming the field or tensor.
EncoderModel load_bert_safetensors(const std::string& dir);
// A GGUF with general.architecture "bert" (token_embd, position_embd, token_types,
// token_embd_norm, blk.N.attn_{q,k,v,output}, attn_output_norm, ffn_up, ffn_down,
// layer_output_norm). Error naming the key or tensor.
EncoderModel load_bert_gguf(const std::string& path);
// The same from a file already open (its tokenizer is read from it too); `path` names it in errors.
EncoderModel load_bert_gguf(std::shared_ptr<const gguf::GgufFile> file, const std::string& path);

}  // namespace ridge
