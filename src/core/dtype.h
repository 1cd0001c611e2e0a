#pragma once
// Tensor element types. Values are GGUF's (ggml_type) so a file's type id maps directly.
// Quantized types store blocks: `block_size` elements packed into `block_bytes` bytes.
#include <cstdint>
#include <optional>
#include <string_view>

namespace ridge {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,  // ternary: five values a byte
  TQ2_0 = 35,  // ternary: 2 bits a value
  MXFP4 = 39,  // 32 E2M1 values with one E8M0 (power of two) scale (OCP MX)
  NVFP4 = 40,  // 64 E2M1 values in four 16-value groups, each with an unsigned E4M3 scale
  // ridge's own, never read from or written to a GGUF file (ids from kFirstInternalType up):
  F8_E4M3 = 1000,  // FP8 weights from Hugging Face checkpoints; their scales live beside them (WeightRef)
};

inline constexpr uint32_t kFirstInternalType = 1000;

struct DTypeInfo {
  DType type;
  std::string_view name;
  int64_t block_size;   // elements per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
};

// nullopt for a type id ridge does not know (a file using it is rejected with a clear error).
std::optional<DTypeInfo> dtype_info(uint32_t raw_type);
const DTypeInfo& dtype_info(DType type);
std::string_view dtype_name(DType type);

// Bytes for `n` elements; `n` must be a multiple of the block size.
int64_t dtype_row_bytes(DType type, int64_t n);

// Case-insensitive lookup by name ("q4_1", "F16"); nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);

}  // namespace ridge
