#pragma once
// Views of a model's weights, kept in their stored format (GGUF blocks, f16, bf16, f32):
// kernels dequantize inside the matmul, so nothing is converted at load.
#include <cstdint>
#include <optional>
#include <memory>
#include <vector>

#include "core/dtype.h"
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

  bool present() const { return data != nullptr; }
  int64_t row_bytes() const { return dtype_row_bytes(type, cols); }
  const void* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_bytes(); }
};

struct LayerWeights {
  WeightRef attn_norm;           // (n_embd)
  WeightRef wq, wk, wv;          // (q_dim, n_embd), (kv_dim, n_embd), (kv_dim, n_embd)
  WeightRef bq, bk, bv;          // optional biases (Qwen2): (q_dim), (kv_dim), (kv_dim)
  WeightRef wo;                  // (n_embd, q_dim)
  WeightRef ffn_norm;            // (n_embd)
  WeightRef w_gate, w_up;        // (n_ff, n_embd)
  WeightRef w_down;              // (n_embd, n_ff)
};

struct ModelWeights {
  WeightRef token_embd;   // (n_vocab, n_embd)
  WeightRef output_norm;  // (n_embd)
  WeightRef output;       // (n_vocab, n_embd); == token_embd when tied
  WeightRef rope_freqs;   // optional (rope_dim / 2) per-pair frequency divisors (Llama 3 scaling in GGUF)
  std::vector<LayerWeights> layers;
};

// A loaded model: shapes, weight views, and whatever keeps the bytes alive (a memory map, buffers).
struct Model {
  ModelSpec spec;
  ModelWeights weights;
  std::shared_ptr<const void> storage;
};

}  // namespace ridge
