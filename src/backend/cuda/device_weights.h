#pragma once
// A model's weights in device memory, uploaded once: matrices in the device layout the GEMV reads
// in place (kernels/cuda/weight_layout.h), plus a BF16 copy of each for the cuBLASLt GEMM path
// (the matrix itself when it is BF16). Types without a device kernel (Q5_x, the K types but Q6_K)
// are dequantized on the host and uploaded as BF16. Norms and biases stay f32.
#include <cstdint>
#include <vector>

#include "backend/cuda/device_buffer.h"
#include "model/weights.h"

namespace ridge::cuda {

struct DeviceWeight {
  DeviceMatrix m;                  // (rows, cols) in the device layout
  const uint16_t* bf16 = nullptr;  // (rows, cols) BF16, or nullptr without GEMM copies
  int64_t bytes() const { return weight_sections(m.type, m.rows, m.cols).bytes; }
};

struct DeviceLayer {
  const float* attn_norm = nullptr;            // (n_embd)
  DeviceWeight wq, wk, wv;                     // (q_dim, n_embd), (kv_dim, n_embd) x 2
  const float *bq = nullptr, *bk = nullptr, *bv = nullptr;  // optional (Qwen2)
  DeviceWeight wo;                             // (n_embd, q_dim)
  const float* ffn_norm = nullptr;             // (n_embd)
  DeviceWeight w_gate, w_up;                   // (n_ff, n_embd)
  DeviceWeight w_down;                         // (n_embd, n_ff)
};

class DeviceModel {
 public:
  // gemm_copies: keep BF16 copies for batches above the GEMV's token count.
  DeviceModel(const Model& model, bool gemm_copies);

  DeviceWeight token_embd;  // (n_vocab, n_embd)
  DeviceWeight output;      // (n_vocab, n_embd); the same buffers as token_embd when tied
  const float* output_norm = nullptr;
  std::vector<DeviceLayer> layers;

  int64_t device_bytes() const { return device_bytes_; }

 private:
  DeviceWeight upload(const WeightRef& w, bool gemm_copy);
  const float* upload_vector(const WeightRef& w);

  std::vector<DeviceBuffer> buffers_;
  int64_t device_bytes_ = 0;
};

}  // namespace ridge::cuda
