// The portable half of the AMX BF16 prefill GEMM: which weights it reads, and its naive reference.
#include "kernels/cpu/bf16_gemm.h"

#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {

bool bf16_gemm_supported(DType type, bool packed) {
  if (packed) return packable(type) && type != DType::MXFP4 && type != DType::NVFP4;  // no FP4 tile decoder yet
  // Any type the reference dequantizes whose blocks tile the kernel's 1,024-value slices, but not
  // F32 and F16: their matrices (routers, small heads) are stored wide to stay precise.
  if (type == DType::F32 || type == DType::F16) return false;
  if (type == DType::F8_E4M3) return false;  // its group scales live outside the rows this path dequantizes
  return ref::can_dequantize(type) && 1024 % dtype_info(type).block_size == 0;
}

void bf16_weight_row(DType type, const uint8_t* w, bool packed, int64_t rows, int64_t cols, int64_t r, uint16_t* out) {
  if (packed ? !bf16_gemm_supported(type, true) : !ref::can_dequantize(type)) fail("the bf16 GEMM does not read {} weights", dtype_name(type));
  std::vector<float> row(static_cast<size_t>(cols));
  if (packed) {
    dequantize_packed_row(type, w, rows, cols, r, row.data());
  } else {
    ref::dequantize_row(type, w + r * dtype_row_bytes(type, cols), row.data(), cols);
  }
  for (int64_t k = 0; k < cols; ++k) out[k] = f32_to_bf16(row[size_t(k)]);
}

void bf16_gemm_reference(const Bf16GemmTask& task, const float* x) {
  std::vector<uint16_t> wrow(static_cast<size_t>(task.cols));
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    bf16_weight_row(task.type, task.w, task.packed, task.rows, task.cols, r, wrow.data());
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      double sum = 0;
      for (int64_t k = 0; k < task.cols; ++k)
        sum += double(bf16_to_f32(wrow[size_t(k)])) * double(bf16_to_f32(f32_to_bf16(x[t * task.cols + k])));
      task.y[t * task.y_stride + r] = float(sum);
    }
  }
}

}  // namespace ridge::cpu
