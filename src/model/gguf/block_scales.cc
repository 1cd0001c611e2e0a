#include "model/gguf/block_scales.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ridge {
namespace {

// An f16 is finite unless its exponent bits are all ones.
bool finite_f16(uint16_t h) { return (h & 0x7c00) != 0x7c00; }

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

struct ScaleFields {
  int offsets[2];  // byte offsets of f16 fields in a block (-1: none)
};

ScaleFields f16_fields(DType type, int64_t block_bytes) {
  const int end = int(block_bytes);
  switch (type) {
    case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: return {{0, 2}};  // d, m / dmin first
    case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: case DType::Q8_1: case DType::IQ2_XXS: case DType::IQ2_XS:
    case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S: case DType::IQ1_S: case DType::IQ4_NL:
    case DType::IQ4_XS:
      return {{0, -1}};
    case DType::Q2_K: return {{end - 4, end - 2}};  // d, dmin last
    case DType::Q3_K: case DType::Q6_K: case DType::TQ1_0: case DType::TQ2_0: return {{end - 2, -1}};  // d last
    default: return {{-1, -1}};
  }
}

bool block_ok(DType type, const uint8_t* block, const ScaleFields& f) {
  switch (type) {
    case DType::Q8_K: {
      float d;
      std::memcpy(&d, block, 4);
      return std::isfinite(d);
    }
    case DType::MXFP4: return block[0] != 0xff;
    case DType::IQ1_M: {  // the f16 scale's four nibbles are the top nibbles of the four scale words
      const uint8_t* sc = block + 48;
      const uint16_t h = uint16_t((load_u16(sc) >> 12) | ((load_u16(sc + 2) >> 8) & 0x00f0) |
                                  ((load_u16(sc + 4) >> 4) & 0x0f00) | (load_u16(sc + 6) & 0xf000));
      return finite_f16(h);
    }
    default:
      for (int off : f.offsets)
        if (off >= 0 && !finite_f16(load_u16(block + off))) return false;
      return true;
  }
}

}  // namespace

int64_t first_nonfinite_scale(DType type, const uint8_t* data, int64_t n_blocks) {
  const DTypeInfo& info = dtype_info(type);
  if (info.block_size == 1) return -1;
  const ScaleFields f = f16_fields(type, info.block_bytes);
  int64_t first = n_blocks;
#pragma omp parallel for reduction(min : first) schedule(static) if (n_blocks > 65536)
  for (int64_t b = 0; b < n_blocks; ++b)
    if (!block_ok(type, data + b * info.block_bytes, f)) first = std::min(first, b);
  return first == n_blocks ? -1 : first;
}

}  // namespace ridge
