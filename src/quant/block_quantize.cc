#include "quant/block_quantize.h"

#include "core/error.h"
#include "kernels/ref/quantize.h"

namespace ridge::quant {
namespace {

bool is_k_type(DType type) {
  return type == DType::Q2_K || type == DType::Q3_K || type == DType::Q4_K || type == DType::Q5_K ||
         type == DType::Q6_K;
}

// The types whose importance-weighted path differs from round-to-nearest.
bool uses_importance(DType type) {
  return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q5_0 || type == DType::Q5_1;
}

bool is_iq4_type(DType type) { return type == DType::IQ4_NL || type == DType::IQ4_XS; }

bool is_iq3_type(DType type) { return type == DType::IQ3_XXS || type == DType::IQ3_S; }

bool is_iq2_type(DType type) { return type == DType::IQ2_XXS || type == DType::IQ2_XS || type == DType::IQ2_S; }

bool is_iq1_type(DType type) { return type == DType::IQ1_S || type == DType::IQ1_M; }

bool is_ternary_type(DType type) { return type == DType::TQ1_0 || type == DType::TQ2_0; }

}  // namespace

bool can_quantize(DType type) {
  return is_k_type(type) || is_iq4_type(type) || is_iq3_type(type) || is_iq2_type(type) || is_iq1_type(type) ||
         is_ternary_type(type) || ref::can_quantize(type);
}

void quantize_rows(DType to, const float* src, void* dst, int64_t n_rows, int64_t n_per_row, const float* importance) {
  if (!can_quantize(to)) fail("ridge has no quantizer for {}", dtype_name(to));
  const int64_t block = dtype_info(to).block_size;
  if (n_per_row < 0 || n_per_row % block != 0)
    fail("quantize {}: a row of {} elements is not a multiple of the block size {}", dtype_name(to), n_per_row, block);
  if (n_rows < 0) fail("quantize {}: {} rows", dtype_name(to), n_rows);
  const int64_t row_bytes = dtype_row_bytes(to, n_per_row);
  auto* out = static_cast<uint8_t*>(dst);
  // Row by row: the weighted searches normalise by statistics of the whole row.
  for (int64_t r = 0; r < n_rows; ++r, src += n_per_row, out += row_bytes) {
    if (is_k_type(to))
      quantize_row_k(to, src, out, n_per_row, importance);
    else if (is_iq4_type(to))
      quantize_row_iq4(to, src, out, n_per_row, importance);
    else if (is_iq3_type(to))
      quantize_row_iq3(to, src, out, n_per_row, importance);
    else if (is_iq2_type(to))
      quantize_row_iq2(to, src, out, n_per_row, importance);
    else if (is_iq1_type(to))
      quantize_row_iq1(to, src, out, n_per_row, importance);
    else if (is_ternary_type(to))
      quantize_row_ternary(to, src, out, n_per_row);
    else if (importance && uses_importance(to))
      quantize_row_weighted(to, src, out, n_per_row, importance);
    else if (importance && (to == DType::MXFP4 || to == DType::NVFP4))
      quantize_row_fp4_weighted(to, src, out, n_per_row, importance, 1.0f);
    else
      ref::quantize_row(to, src, out, n_per_row);
  }
}

}  // namespace ridge::quant
