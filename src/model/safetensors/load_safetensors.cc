#include "model/safetensors/load_safetensors.h"

#include <cmath>
#include <cstring>
#include <optional>
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
  std::vector<std::vector<uint8_t>> repacked;  // NVFP4 matrices in GGUF's block layout
};

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class WeightBinder {
 public:
  explicit WeightBinder(SafetensorsStorage& storage) : storage_(storage) {}

  // A [rows, cols] matrix (PyTorch [out, in]), kept in its stored type (NVFP4 repacked into GGUF's blocks).
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols) {
    if (auto w = nvfp4_matrix(name, rows, cols)) return *w;
    if (auto w = fp8_matrix(name, rows, cols)) return *w;
    const SafetensorsTensor& t = tensor(name, {rows, cols});
    return WeightRef{t.type, t.data, rows, cols};
  }

  // A [n] vector, always f32 (converted once when stored as f16/bf16).
  WeightRef vector(const std::string& name, int64_t n) {
    return f32_vector(tensor(name, {n}), storage_.f32_copies);
  }

 private:
  const SafetensorsTensor& tensor(const std::string& name, const std::vector<int64_t>& shape) {
    return checked_tensor(storage_.checkpoint, name, shape);
  }

  // NVFP4 as ModelOpt writes it (weight: U8 [rows, cols/2], value 2j in the low nibble of byte j;
  // weight_scale: F8_E4M3 [rows, cols/16]; weight_scale_2: the F32 per-tensor factor) or as
  // compressed-tensors does (weight_packed, weight_scale, weight_global_scale: the factor's
  // reciprocal). nullopt when `name` is not such a weight.
  std::optional<WeightRef> nvfp4_matrix(const std::string& name, int64_t rows, int64_t cols) {
    const std::string base = name.substr(0, name.size() - std::string_view(".weight").size());
    const SafetensorsCheckpoint& c = storage_.checkpoint;
    const SafetensorsTensor* packed = c.find(base + ".weight_packed");
    if (!packed) packed = c.find(name);
    const SafetensorsTensor* scales = c.find(base + ".weight_scale");
    if (!packed || packed->dtype != "U8" || !scales || scales->shape.size() != 2) return std::nullopt;
    if (packed->shape != std::vector<int64_t>{rows, cols / 2} || cols % 2 != 0)
      fail("NVFP4 tensor '{}' has shape {}, expected [{}, {}] (two values per byte)", packed->name, shape_string(packed->shape),
           rows, cols / 2);
    if (scales->dtype != "F8_E4M3" || scales->shape != std::vector<int64_t>{rows, cols / 16})
      fail("NVFP4 scales '{}' must be F8_E4M3 [{}, {}], not {} {}", scales->name, rows, cols / 16, scales->dtype,
           shape_string(scales->shape));
    if (cols % 64 != 0) fail("NVFP4 tensor '{}': rows of {} values do not fill ridge's 64-value NVFP4 blocks", name, cols);
    float factor = 1.0f;
    const SafetensorsTensor* f = c.find(base + ".weight_scale_2");
    const SafetensorsTensor* g = f ? nullptr : c.find(base + ".weight_global_scale");
    if (const SafetensorsTensor* s = f ? f : g) {
      if (s->type != DType::F32 || s->n_elements != 1) fail("NVFP4 factor '{}' must be one F32 value", s->name);
      std::memcpy(&factor, s->data, 4);
      if (g) factor = 1.0f / factor;
      if (!std::isfinite(factor) || factor == 0.0f) fail("NVFP4 factor '{}' is {}, not a finite non-zero value", s->name, factor);
    }
    auto& out = storage_.repacked.emplace_back(size_t(rows * cols / 64 * 36));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t b = 0; b < cols / 64; ++b) {
        uint8_t* blk = out.data() + (r * (cols / 64) + b) * 36;
        for (int s = 0; s < 4; ++s) {
          blk[s] = scales->data[r * (cols / 16) + 4 * b + s];
          const uint8_t* src = packed->data + r * (cols / 2) + 32 * b + 8 * s;  // 16 values, two per byte
          const auto code = [&](int v) { return uint8_t(v % 2 ? src[v / 2] >> 4 : src[v / 2] & 0x0f); };
          for (int j = 0; j < 8; ++j) blk[4 + 8 * s + j] = uint8_t(code(j) | code(j + 8) << 4);
        }
      }
    WeightRef w{DType::NVFP4, out.data(), rows, cols};
    w.scale = factor;
    return w;
  }

  // FP8 E4M3 weights with the scales their checkpoints carry: "weight_scale" per tensor, per output
  // channel, or per 128 x 128 block (compressed-tensors, ModelOpt), or "weight_scale_inv" per block
  // (DeepSeek-V3, Qwen3 FP8: the weight is value times it). nullopt when `name` is no FP8 tensor.
  std::optional<WeightRef> fp8_matrix(const std::string& name, int64_t rows, int64_t cols) {
    const SafetensorsCheckpoint& c = storage_.checkpoint;
    const SafetensorsTensor* t = c.find(name);
    if (!t || t->dtype != "F8_E4M3") return std::nullopt;
    if (t->shape != std::vector<int64_t>{rows, cols})
      fail("tensor '{}' has shape {}, expected [{}, {}]", name, shape_string(t->shape), rows, cols);
    if (cols % 16 != 0) fail("FP8 tensor '{}': rows of {} values; ridge's FP8 kernels take multiples of 16", name, cols);
    WeightRef w{DType::F8_E4M3, t->data, rows, cols};
    const std::string base = name.substr(0, name.size() - std::string_view(".weight").size());
    const SafetensorsTensor* s = c.find(base + ".weight_scale");
    if (!s) s = c.find(base + ".weight_scale_inv");
    if (!s) return w;
    const std::vector<float> v = tensor_floats(*s);
    for (float x : v)
      if (!std::isfinite(x)) fail("FP8 scale '{}' holds {}", s->name, x);
    if (v.size() == 1) {
      w.scale = v[0];
      return w;
    }
    auto& g = storage_.f32_copies.emplace_back();
    if (int64_t(v.size()) == rows && s->shape.size() <= 2 && (s->shape.size() < 2 || s->shape[1] == 1)) {
      g = v;  // per output channel
      w.group_cols = cols;
    } else {
      constexpr int64_t kBlock = 128;
      const int64_t br = (rows + kBlock - 1) / kBlock, bc = (cols + kBlock - 1) / kBlock;
      if (s->shape != std::vector<int64_t>{br, bc})
        fail("FP8 scales '{}' have shape {}: neither one per tensor, per row [{}], nor per 128 x 128 block [{}, {}]", s->name,
             shape_string(s->shape), rows, br, bc);
      if (cols % kBlock != 0) fail("FP8 tensor '{}': block scales need rows of whole 128-value blocks, not {}", name, cols);
      g.resize(size_t(rows * bc));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < bc; ++b) g[size_t(r * bc + b)] = v[size_t(r / kBlock * bc + b)];
      w.group_cols = kBlock;
    }
    w.group_scales = g.data();
    return w;
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
    auto storage = std::make_shared<SafetensorsStorage>(SafetensorsStorage{SafetensorsCheckpoint::open(dir), {}, {}});
    WeightBinder bind(*storage);
    bind_weights(model.spec, bind, model.weights);
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", dir, e.what());
  }
  return model;
}

}  // namespace ridge
