#include "kernels/ref/dequant.h"

#include <cstring>

#include "core/error.h"
#include "core/fp8.h"
#include "kernels/ref/dequant_blocks.h"

namespace ridge::ref {

bool can_dequantize(DType type) {
  switch (type) {
    case DType::F32: case DType::F16: case DType::BF16:
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
    case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: case DType::Q8_K:
    case DType::MXFP4: case DType::NVFP4: case DType::F8_E4M3:
    case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S:
    case DType::IQ1_S: case DType::IQ1_M: case DType::IQ4_NL: case DType::IQ4_XS: case DType::TQ1_0: case DType::TQ2_0:
      return true;
    default:
      // Q8_1 is only ever an activation format inside ggml; the integer and f64 types hold
      // indices and metadata, not weights. Neither ggml nor the gguf package decodes them.
      return false;
  }
}

void dequantize_row(DType type, const void* src_void, float* dst, int64_t n) {
  if (!can_dequantize(type)) fail("no dequantizer for tensor type {}", dtype_name(type));
  if (n < 0) fail("cannot dequantize {} elements", n);
  const auto* src = static_cast<const uint8_t*>(src_void);
  const int64_t n_blocks = dtype_row_bytes(type, n) / dtype_info(type).block_bytes;  // checks the multiple
  switch (type) {
    case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
    case DType::F16: for (int64_t i = 0; i < n; ++i) dst[i] = load_f16(src + 2 * i); return;
    case DType::BF16: for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i)); return;
    case DType::Q4_0: dequantize_q4_0(src, dst, n_blocks); return;
    case DType::Q4_1: dequantize_q4_1(src, dst, n_blocks); return;
    case DType::Q5_0: dequantize_q5_0(src, dst, n_blocks); return;
    case DType::Q5_1: dequantize_q5_1(src, dst, n_blocks); return;
    case DType::Q8_0: dequantize_q8_0(src, dst, n_blocks); return;
    case DType::Q2_K: dequantize_q2_k(src, dst, n_blocks); return;
    case DType::Q3_K: dequantize_q3_k(src, dst, n_blocks); return;
    case DType::Q4_K: dequantize_q4_k(src, dst, n_blocks); return;
    case DType::Q5_K: dequantize_q5_k(src, dst, n_blocks); return;
    case DType::Q6_K: dequantize_q6_k(src, dst, n_blocks); return;
    case DType::Q8_K: dequantize_q8_k(src, dst, n_blocks); return;
    case DType::MXFP4: dequantize_mxfp4(src, dst, n_blocks); return;
    case DType::NVFP4: dequantize_nvfp4(src, dst, n_blocks); return;
    case DType::IQ2_XXS: dequantize_iq2_xxs(src, dst, n_blocks); return;
    case DType::IQ2_XS: dequantize_iq2_xs(src, dst, n_blocks); return;
    case DType::IQ2_S: dequantize_iq2_s(src, dst, n_blocks); return;
    case DType::IQ3_XXS: dequantize_iq3_xxs(src, dst, n_blocks); return;
    case DType::IQ3_S: dequantize_iq3_s(src, dst, n_blocks); return;
    case DType::IQ1_S: dequantize_iq1_s(src, dst, n_blocks); return;
    case DType::IQ1_M: dequantize_iq1_m(src, dst, n_blocks); return;
    case DType::IQ4_NL: dequantize_iq4_nl(src, dst, n_blocks); return;
    case DType::IQ4_XS: dequantize_iq4_xs(src, dst, n_blocks); return;
    case DType::TQ1_0: dequantize_tq1_0(src, dst, n_blocks); return;
    case DType::TQ2_0: dequantize_tq2_0(src, dst, n_blocks); return;
    case DType::F8_E4M3: for (int64_t i = 0; i < n; ++i) dst[i] = fp8_e4m3_to_f32(src[i]); return;  // scales apart
    default: fail("no dequantizer for tensor type {}", dtype_name(type));
  }
}

}  // namespace ridge::ref
