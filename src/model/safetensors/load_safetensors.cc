#include "model/safetensors/load_safetensors.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/fp16.h"
#include "model/safetensors/hf_config.h"
#include "model/safetensors/safetensors_checkpoint.h"

namespace ridge {
namespace {

// Keeps the shards mapped, plus f32 copies of small vectors (norms, biases) stored as f16/bf16.
struct SafetensorsStorage {
  SafetensorsCheckpoint checkpoint;
  std::vector<std::vector<float>> f32_copies;
};

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class WeightBinder {
 public:
  explicit WeightBinder(SafetensorsStorage& storage) : storage_(storage) {}

  // A [rows, cols] matrix (PyTorch [out, in]), kept in its stored type.
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols) {
    const SafetensorsTensor& t = tensor(name, {rows, cols});
    return WeightRef{t.type, t.data, rows, cols};
  }

  // A [n] vector, always f32 (converted once when stored as f16/bf16).
  WeightRef vector(const std::string& name, int64_t n) {
    const SafetensorsTensor& t = tensor(name, {n});
    if (t.type == DType::F32) return WeightRef{DType::F32, t.data, 1, n};
    auto& copy = storage_.f32_copies.emplace_back(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, t.data + 2 * i, 2);
      copy[size_t(i)] = t.type == DType::F16 ? f16_to_f32(bits) : bf16_to_f32(bits);
    }
    return WeightRef{DType::F32, copy.data(), 1, n};
  }

 private:
  const SafetensorsTensor& tensor(const std::string& name, const std::vector<int64_t>& shape) {
    const SafetensorsTensor* t = storage_.checkpoint.find(name);
    if (!t) fail("missing tensor '{}'", name);
    if (t->shape != shape)
      fail("tensor '{}' has shape {}, expected {}", name, shape_string(t->shape), shape_string(shape));
    if (t->type != DType::F32 && t->type != DType::F16 && t->type != DType::BF16)
      fail("tensor '{}' has dtype {}; ridge computes with F32, F16 and BF16", name, dtype_name(t->type));
    return *t;
  }

  SafetensorsStorage& storage_;
};

void bind_weights(const ModelSpec& s, WeightBinder& bind, ModelWeights& w) {
  w.token_embd = bind.matrix("model.embed_tokens.weight", s.n_vocab, s.n_embd);
  w.output_norm = bind.vector("model.norm.weight", s.n_embd);
  w.output = s.tied_embeddings ? w.token_embd : bind.matrix("lm_head.weight", s.n_vocab, s.n_embd);
  w.layers.resize(size_t(s.n_layer));
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights& l = w.layers[size_t(i)];
    l.attn_norm = bind.vector(p + "input_layernorm.weight", s.n_embd);
    l.wq = bind.matrix(p + "self_attn.q_proj.weight", s.q_dim(), s.n_embd);
    l.wk = bind.matrix(p + "self_attn.k_proj.weight", s.kv_dim(), s.n_embd);
    l.wv = bind.matrix(p + "self_attn.v_proj.weight", s.kv_dim(), s.n_embd);
    if (s.qkv_bias) {
      l.bq = bind.vector(p + "self_attn.q_proj.bias", s.q_dim());
      l.bk = bind.vector(p + "self_attn.k_proj.bias", s.kv_dim());
      l.bv = bind.vector(p + "self_attn.v_proj.bias", s.kv_dim());
    }
    l.wo = bind.matrix(p + "self_attn.o_proj.weight", s.n_embd, s.q_dim());
    l.ffn_norm = bind.vector(p + "post_attention_layernorm.weight", s.n_embd);
    l.w_gate = bind.matrix(p + "mlp.gate_proj.weight", s.n_ff, s.n_embd);
    l.w_up = bind.matrix(p + "mlp.up_proj.weight", s.n_ff, s.n_embd);
    l.w_down = bind.matrix(p + "mlp.down_proj.weight", s.n_embd, s.n_ff);
  }
}

}  // namespace

Model load_safetensors_model(const std::string& dir) {
  Model model;
  try {
    model.spec = read_hf_config((std::filesystem::path(dir) / "config.json").string());
    auto storage = std::make_shared<SafetensorsStorage>(SafetensorsStorage{SafetensorsCheckpoint::open(dir), {}});
    WeightBinder bind(*storage);
    bind_weights(model.spec, bind, model.weights);
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
  return model;
}

}  // namespace ridge
