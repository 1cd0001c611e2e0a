#include "core/dtype.h"

#include <array>
#include <cctype>

#include "core/error.h"

namespace ridge {
namespace {

constexpr std::array kTypes = {
    DTypeInfo{DType::F32, "F32", 1, 4},       DTypeInfo{DType::F16, "F16", 1, 2},
    DTypeInfo{DType::Q4_0, "Q4_0", 32, 18},   DTypeInfo{DType::Q4_1, "Q4_1", 32, 20},
    DTypeInfo{DType::Q5_0, "Q5_0", 32, 22},   DTypeInfo{DType::Q5_1, "Q5_1", 32, 24},
    DTypeInfo{DType::Q8_0, "Q8_0", 32, 34},   DTypeInfo{DType::Q8_1, "Q8_1", 32, 36},
    DTypeInfo{DType::Q2_K, "Q2_K", 256, 84},  DTypeInfo{DType::Q3_K, "Q3_K", 256, 110},
    DTypeInfo{DType::Q4_K, "Q4_K", 256, 144}, DTypeInfo{DType::Q5_K, "Q5_K", 256, 176},
    DTypeInfo{DType::Q6_K, "Q6_K", 256, 210}, DTypeInfo{DType::Q8_K, "Q8_K", 256, 292},
    DTypeInfo{DType::I8, "I8", 1, 1},         DTypeInfo{DType::I16, "I16", 1, 2},
    DTypeInfo{DType::I32, "I32", 1, 4},       DTypeInfo{DType::I64, "I64", 1, 8},
    DTypeInfo{DType::F64, "F64", 1, 8},       DTypeInfo{DType::BF16, "BF16", 1, 2},
    DTypeInfo{DType::MXFP4, "MXFP4", 32, 17}, DTypeInfo{DType::NVFP4, "NVFP4", 64, 36},
    DTypeInfo{DType::IQ2_XXS, "IQ2_XXS", 256, 66}, DTypeInfo{DType::IQ2_XS, "IQ2_XS", 256, 74},
    DTypeInfo{DType::IQ2_S, "IQ2_S", 256, 82},     DTypeInfo{DType::IQ3_XXS, "IQ3_XXS", 256, 98},
    DTypeInfo{DType::IQ3_S, "IQ3_S", 256, 110},    DTypeInfo{DType::IQ1_S, "IQ1_S", 256, 50},
    DTypeInfo{DType::IQ1_M, "IQ1_M", 256, 56},     DTypeInfo{DType::IQ4_NL, "IQ4_NL", 32, 18},
    DTypeInfo{DType::IQ4_XS, "IQ4_XS", 256, 136},  DTypeInfo{DType::TQ1_0, "TQ1_0", 256, 54},
    DTypeInfo{DType::TQ2_0, "TQ2_0", 256, 66},
    DTypeInfo{DType::F8_E4M3, "F8_E4M3", 1, 1},
};

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t raw_type) {
  for (const auto& info : kTypes)
    if (static_cast<uint32_t>(info.type) == raw_type) return info;
  return std::nullopt;
}

const DTypeInfo& dtype_info(DType type) {
  for (const auto& info : kTypes)
    if (info.type == type) return info;
  fail("unknown dtype id {}", static_cast<uint32_t>(type));
}

std::string_view dtype_name(DType type) { return dtype_info(type).name; }

int64_t dtype_row_bytes(DType type, int64_t n) {
  const auto& info = dtype_info(type);
  if (n % info.block_size != 0) fail("{} elements is not a multiple of the {} block size {}", n, info.name, info.block_size);
  return n / info.block_size * info.block_bytes;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kTypes) {
    if (info.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::toupper(static_cast<unsigned char>(name[i])) == info.name[i];
    if (same) return info.type;
  }
  return std::nullopt;
}

}  // namespace ridge
