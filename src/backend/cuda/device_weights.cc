#include "backend/cuda/device_weights.h"

#include <vector>

#include "backend/weight_repack.h"
#include "core/error.h"
#include "core/fp16.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/matmul.h"

namespace ridge::cuda {

DeviceModel::DeviceModel(const Model& model, bool gemm_copies) {
  const ModelWeights& w = model.weights;
  token_embd = upload(w.token_embd, false);
  output = w.output.data == w.token_embd.data ? token_embd : upload(w.output, gemm_copies);
  if (gemm_copies && !output.bf16) {  // tied: the embedding's copy serves the output projection
    if (output.m.type == DType::BF16) {
      output.bf16 = reinterpret_cast<const uint16_t*>(output.m.data);
    } else {
      DeviceBuffer& b = buffers_.emplace_back(output.m.rows * output.m.cols * 2);
      dequantize_to_bf16(output.m, b.as<uint16_t>(), nullptr);
      output.bf16 = b.as<uint16_t>();
      device_bytes_ += b.bytes();
    }
  }
  output_norm = upload_vector(w.output_norm);
  for (const LayerWeights& l : w.layers) {
    DeviceLayer d;
    d.attn_norm = upload_vector(l.attn_norm);
    d.wq = upload(l.wq, gemm_copies);
    d.wk = upload(l.wk, gemm_copies);
    d.wv = upload(l.wv, gemm_copies);
    d.bq = upload_vector(l.bq);
    d.bk = upload_vector(l.bk);
    d.bv = upload_vector(l.bv);
    d.wo = upload(l.wo, gemm_copies);
    d.ffn_norm = upload_vector(l.ffn_norm);
    d.w_gate = upload(l.w_gate, gemm_copies);
    d.w_up = upload(l.w_up, gemm_copies);
    d.w_down = upload(l.w_down, gemm_copies);
    layers.push_back(d);
  }
  device_sync();
}

DeviceWeight DeviceModel::upload(const WeightRef& w, bool gemm_copy) {
  if (!w.present()) fail("CUDA upload: a weight matrix is missing");
  DeviceWeight out;
  const bool scaled = w.scale != 1.0f || w.group_scales;  // NVFP4's factor, FP8's scales: the BF16 copy carries them
  if (device_weight_type(w.type) && !scaled) {
    const WeightSections sec = weight_sections(w.type, w.rows, w.cols);
    std::vector<uint8_t> staged(size_t(sec.bytes));
    repack_for_device(w.type, w.data, w.packed, w.rows, w.cols, staged.data());
    DeviceBuffer& b = buffers_.emplace_back(sec.bytes);
    copy_to_device(b.get(), staged.data(), sec.bytes, nullptr);
    device_sync();
    out.m = {w.type, b.as<uint8_t>(), w.rows, w.cols};
  } else {
    // No device kernel for this type (or its scales): dequantize on the host, keep it as BF16.
    std::vector<uint16_t> staged(size_t(w.rows * w.cols));
    std::vector<float> row(size_t(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
      if (w.packed) cpu::dequantize_packed_row(w.type, w.data, w.rows, w.cols, r, row.data());
      else ref::dequantize_row(w.type, w.row(r), row.data(), w.cols);
      ref::apply_group_scales(as_matrix(w), r, row.data());
      for (int64_t c = 0; c < w.cols; ++c) staged[size_t(r * w.cols + c)] = ridge::f32_to_bf16(row[size_t(c)] * w.scale);
    }
    DeviceBuffer& b = buffers_.emplace_back(weight_sections(DType::BF16, w.rows, w.cols).bytes);
    copy_to_device(b.get(), staged.data(), w.rows * w.cols * 2, nullptr);
    device_sync();
    out.m = {DType::BF16, b.as<uint8_t>(), w.rows, w.cols};
  }
  device_bytes_ += out.bytes();
  if (!gemm_copy) return out;
  if (out.m.type == DType::BF16) {
    out.bf16 = reinterpret_cast<const uint16_t*>(out.m.data);
  } else {
    DeviceBuffer& b = buffers_.emplace_back(w.rows * w.cols * 2);
    dequantize_to_bf16(out.m, b.as<uint16_t>(), nullptr);
    out.bf16 = b.as<uint16_t>();
    device_bytes_ += b.bytes();
  }
  return out;
}

const float* DeviceModel::upload_vector(const WeightRef& w) {
  if (!w.present()) return nullptr;
  if (w.type != DType::F32) fail("CUDA upload: norms and biases must be F32, got {}", dtype_name(w.type));
  const int64_t bytes = w.rows * w.cols * 4;
  DeviceBuffer& b = buffers_.emplace_back(bytes);
  copy_to_device(b.get(), w.data, bytes, nullptr);
  device_sync();
  device_bytes_ += bytes;
  return b.as<float>();
}

}  // namespace ridge::cuda
