#include "kernels/cpu/packed_layout.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {
namespace {

// Bytes of a block's scale (+ minimum) header and of its quants.
struct BlockParts {
  int64_t header, quants;
};
BlockParts parts_of(DType type) {
  switch (type) {
    case DType::Q4_0: return {2, 16};
    case DType::Q4_1: return {4, 16};
    case DType::Q8_0: return {2, 32};
    default: fail("no packed layout for {}", dtype_name(type));
  }
}

}  // namespace

bool packable(DType type) { return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0; }

void pack_rows(DType type, void* data, int64_t rows, int64_t cols) {
  const BlockParts p = parts_of(type);
  const int64_t block_bytes = p.header + p.quants, n_blocks = cols / kActBlock;
  const int64_t row_bytes = n_blocks * block_bytes;
  std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* dst = static_cast<uint8_t*>(data) + r * row_bytes;
    std::memcpy(row.data(), dst, size_t(row_bytes));
    for (int64_t g0 = 0; g0 < n_blocks; g0 += kPackGroup) {
      const int64_t n = std::min(kPackGroup, n_blocks - g0);
      for (int64_t k = 0; k < n; ++k) {
        const uint8_t* block = row.data() + (g0 + k) * block_bytes;
        std::memcpy(dst + 2 * k, block, 2);                                          // d
        if (type == DType::Q4_1) std::memcpy(dst + 2 * n + 2 * k, block + 2, 2);     // m
        std::memcpy(dst + n * (p.header) + k * p.quants, block + p.header, size_t(p.quants));
      }
      dst += n * block_bytes;
    }
  }
}

void dequantize_packed_row(DType type, const void* row, float* out, int64_t cols) {
  const BlockParts p = parts_of(type);
  const int64_t block_bytes = p.header + p.quants, n_blocks = cols / kActBlock;
  const auto* src = static_cast<const uint8_t*>(row);
  uint8_t block[34];
  for (int64_t g0 = 0; g0 < n_blocks; g0 += kPackGroup) {
    const int64_t n = std::min(kPackGroup, n_blocks - g0);
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(block, src + 2 * k, 2);
      if (type == DType::Q4_1) std::memcpy(block + 2, src + 2 * n + 2 * k, 2);
      std::memcpy(block + p.header, src + n * p.header + k * p.quants, size_t(p.quants));
      ref::dequantize_row(type, block, out + (g0 + k) * kActBlock, kActBlock);
    }
    src += n * block_bytes;
  }
}

void pack_activations(DType type, const ActBlock* blocks, int64_t n_blocks, PackedActGroup* out) {
  const bool nibble_order = type != DType::Q8_0;
  for (int64_t g = 0; g * kPackGroup < n_blocks; ++g) {
    PackedActGroup& group = out[g];
    std::memset(&group, 0, sizeof group);
    for (int64_t k = 0; k < kPackGroup && g * kPackGroup + k < n_blocks; ++k) {
      const ActBlock& a = blocks[g * kPackGroup + k];
      if (nibble_order) {
        std::memcpy(group.q + 16 * k, a.q, 16);
        std::memcpy(group.q + 64 + 16 * k, a.q + 16, 16);
      } else {
        std::memcpy(group.q + 32 * k, a.q, 32);
      }
      group.d[k] = a.d;
      int32_t sum = 0;
      for (int8_t q : a.q) sum += q;
      group.s[k] = type == DType::Q4_1 ? a.s : a.d * float(sum);
    }
  }
}

}  // namespace ridge::cpu
