#pragma once
// The per-ISA inner kernels of the quantized matmul. Each is compiled in its own translation unit
// with that ISA's flags (matmul_<isa>.cc) and chosen at run time by matmul.cc.
#include <cstdint>

#include "core/dtype.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/int8_group.h"

namespace ridge::cpu {

// y[t * y_stride + r] = dot(weight row r, activation row t) for r in [row_begin, row_end), t in [0, n_tokens).
struct QuantDotTask {
  DType type;            // a type quant_dot_supported() accepts
  const uint8_t* w;      // (rows, row_bytes) blocks as stored in GGUF
  int64_t row_bytes;
  int64_t n_blocks;      // activation blocks of 32 per row (8 per K-quant super-block)
  int64_t row_begin, row_end;
  const ActBlock* acts;  // (n_tokens, n_blocks)
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
};

bool quant_dot_supported(DType type);

void quant_dot_scalar(const QuantDotTask& task);
void quant_dot_avx2(const QuantDotTask& task);
void quant_dot_avxvnni(const QuantDotTask& task);
void quant_dot_avx512vnni(const QuantDotTask& task);
// The same without the wide K-quant kernels.
void quant_dot_avx2_narrow(const QuantDotTask& task);
void quant_dot_avxvnni_narrow(const QuantDotTask& task);
void quant_dot_avx512vnni_narrow(const QuantDotTask& task);
// K-quant rows [row_begin, row_begin + L k) of the task, one row per lane of L-lane registers (L = 16
// on AVX-512, 8 otherwise), k as large as fits; returns the first row left (k_dot_wide.h).
int64_t k_dot_tiles_avx2(const QuantDotTask& task);
int64_t k_dot_tiles_avxvnni(const QuantDotTask& task);
int64_t k_dot_tiles_avx512(const QuantDotTask& task);

// K quants and the int8 group types against several tokens: whole tiles of rows on the wide kernel, the rest (and decode)
// on the narrow one; every path gives the same bits.
inline void quant_dot_narrow_and_wide(const QuantDotTask& task, void (*narrow)(const QuantDotTask&),
                                      int64_t (*wide)(const QuantDotTask&)) {
  constexpr int64_t kWideMinTokens = 4;
  const bool k_quant = task.type == DType::Q4_K || task.type == DType::Q5_K || task.type == DType::Q6_K || int8_group_type(task.type);
  if (!k_quant || task.n_tokens < kWideMinTokens) return narrow(task);
  QuantDotTask rest = task;
  rest.row_begin = wide(task);
  if (rest.row_begin < rest.row_end) narrow(rest);
}

// y[t * y_stride + r] = dot(weight row r, x row t) for F32, F16 and BF16 weights, converted in registers.
struct FloatDotTask {
  DType type;
  const uint8_t* w;  // (rows, row_bytes)
  int64_t row_bytes;
  int64_t cols;
  int64_t row_begin, row_end;
  const float* x;  // (n_tokens, cols)
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
  const float* group_scales = nullptr;  // F8_E4M3: per row and group of group_cols values (1 if null)
  int64_t group_cols = 0;
};
inline bool float_dot_supported(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 || type == DType::F8_E4M3;
}
void float_dot_avx2(const FloatDotTask& task);
void fp8_dot_avx512(const FloatDotTask& task);  // F8_E4M3 on AVX-512 CPUs

// BF16 weights against activations rounded to bf16 (AVX-512 BF16 CPUs): x is (n_tokens, cols) bf16.
struct Bf16DotTask {
  const uint8_t* w;
  int64_t row_bytes;
  int64_t cols;
  int64_t row_begin, row_end;
  const uint16_t* x;
  int64_t n_tokens;
  float* y;
  int64_t y_stride;
};
bool bf16_dot_usable();  // the CPU has AVX-512 BF16 (and AVX-512 F/BW/VL)
void to_bf16_avx512(const float* x, int64_t n, uint16_t* out);
void bf16_dot_avx512(const Bf16DotTask& task);

// f32 dot of n values (other weight types, dequantized a row at a time).
float dot_f32_scalar(const float* a, const float* b, int64_t n);
float dot_f32_avx2(const float* a, const float* b, int64_t n);

}  // namespace ridge::cpu
