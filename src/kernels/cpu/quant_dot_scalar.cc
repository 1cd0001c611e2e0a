// Portable integer dot kernels: the same arithmetic as the SIMD ones (int32 block sums, f32 scales),
// used on CPUs without AVX2 and as the reference the SIMD kernels are tested against.
#include <cstring>

#include "core/fp16.h"
#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {
namespace {

float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Unpacks one weight block into signed-or-unsigned int values, its scale and its offset coefficient.
void load_block(DType type, const uint8_t* p, int32_t* q, float& d, float& offset_min) {
  offset_min = 0.0f;
  if (type == DType::Q8_0) {
    d = load_f16(p);
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(p[2 + i]);
    return;
  }
  const uint8_t* nibbles = p + (type == DType::Q4_1 ? 4 : 2);
  d = load_f16(p);
  const int32_t zero = type == DType::Q4_1 ? 0 : 8;  // Q4_0 stores q + 8
  if (type == DType::Q4_1) offset_min = load_f16(p + 2);
  for (int i = 0; i < 16; ++i) {
    q[i] = (nibbles[i] & 0x0f) - zero;
    q[i + 16] = (nibbles[i] >> 4) - zero;
  }
}

}  // namespace

bool quant_dot_supported(DType type) { return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0; }

void quant_dot_scalar(const QuantDotTask& task) {
  const int64_t block_bytes = dtype_info(task.type).block_bytes;
  int32_t q[32];
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    const uint8_t* row = task.w + r * task.row_bytes;
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      const ActBlock* acts = task.acts + t * task.n_blocks;
      float sum = 0.0f;
      for (int64_t b = 0; b < task.n_blocks; ++b) {
        float d, offset_min;
        load_block(task.type, row + b * block_bytes, q, d, offset_min);
        int32_t isum = 0;
        for (int i = 0; i < 32; ++i) isum += q[i] * acts[b].q[i];
        sum += float(isum) * (d * acts[b].d) + offset_min * acts[b].s;
      }
      task.y[t * task.y_stride + r] = sum;
    }
  }
}

float dot_f32_scalar(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace ridge::cpu
