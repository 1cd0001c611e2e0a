#include "backend/weight_repack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/cuda/weight_layout.h"
#include "kernels/ref/dequant.h"

namespace ridge {
namespace {

// Scale (+ minimum) header bytes of the block types the device layout splits.
int64_t header_bytes(DType t) { return t == DType::Q4_1 ? 4 : 2; }

// Kept out of line: GCC 12 at -O3 merged the inlined small copies of a block's fields into
// aligned 16-byte stores at addresses that are not 16-byte aligned (a crash in the tests).
[[gnu::noinline]] void copy_field(uint8_t* dst, const uint8_t* src, size_t n) { std::memcpy(dst, src, n); }

// Moves one GGUF row's blocks into the sections (gguf -> device when `to_device`, else back).
void move_row(DType type, uint8_t* gguf, uint8_t* dev, const cuda::WeightSections& sec, int64_t r, int64_t cols,
              bool to_device) {
  auto mv = [to_device](uint8_t* g, uint8_t* d, size_t n) {
    if (to_device) copy_field(d, g, n);
    else copy_field(g, d, n);
  };
  const int64_t nb = cols / 32;
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1: {
      const int64_t bb = dtype_info(type).block_bytes;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* blk = gguf + b * bb;
        uint8_t* dm = dev + sec.scales + (r * nb + b) * 4;
        mv(blk, dm, 2);
        if (type == DType::Q4_1) mv(blk + 2, dm + 2, 2);
        else if (to_device) std::memset(dm + 2, 0, 2);
        mv(blk + header_bytes(type), dev + r * (cols / 2) + b * 16, 16);
      }
      return;
    }
    case DType::Q8_0:
      for (int64_t b = 0; b < nb; ++b) {
        mv(gguf + b * 34, dev + sec.scales + (r * nb + b) * 2, 2);
        mv(gguf + b * 34 + 2, dev + r * cols + b * 32, 32);
      }
      return;
    case DType::Q6_K:
      for (int64_t s = 0; s < cols / 256; ++s) {
        uint8_t* blk = gguf + s * 210;
        mv(blk, dev + r * (cols / 2) + s * 128, 128);
        mv(blk + 128, dev + sec.qh + r * (cols / 4) + s * 64, 64);
        mv(blk + 192, dev + sec.sub_scales + r * (cols / 16) + s * 16, 16);
        mv(blk + 208, dev + sec.scales + (r * (cols / 256) + s) * 2, 2);
      }
      return;
    case DType::F32:
    case DType::F16:
    case DType::BF16: {
      const int64_t bytes = dtype_row_bytes(type, cols);
      mv(gguf, dev + r * bytes, size_t(bytes));
      return;
    }
    default: fail("no device layout for {}", dtype_name(type));
  }
}

}  // namespace

void repack_for_device(DType type, const void* data, bool cpu_packed, int64_t rows, int64_t cols, uint8_t* out) {
  if (!cuda::device_weight_type(type)) fail("no device layout for {}", dtype_name(type));
  const cuda::WeightSections sec = cuda::weight_sections(type, rows, cols);
  const int64_t row_bytes = dtype_row_bytes(type, cols);
  const auto* src = static_cast<const uint8_t*>(data);
#pragma omp parallel
  {
    std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      if (cpu_packed) cpu::unpack_row(type, src, rows, cols, r, row.data());
      else std::memcpy(row.data(), src + r * row_bytes, size_t(row_bytes));
      move_row(type, row.data(), out, sec, r, cols, true);
    }
  }
}

void dequantize_device_row(DType type, const uint8_t* data, int64_t rows, int64_t cols, int64_t r, float* out) {
  const cuda::WeightSections sec = cuda::weight_sections(type, rows, cols);
  std::vector<uint8_t> row(size_t(dtype_row_bytes(type, cols)));
  move_row(type, row.data(), const_cast<uint8_t*>(data), sec, r, cols, false);
  ref::dequantize_row(type, row.data(), out, cols);
}

}  // namespace ridge
