#include "kernels/cpu/packed_fp4.h"

#include <cmath>
#include <vector>

#include "kernels/ref/fp4.h"

namespace ridge::cpu::fp4_packed {
namespace {

// Code of value v (0..31) of 32 values stored GGUF-style in `qs` with `half` values per nibble
// run: MXFP4 keeps value j in the low nibble of byte j and j + 16 in the high one (half = 16);
// NVFP4 does so per 16-value group, 8 to a run (half = 8).
uint8_t gguf_code(const uint8_t* qs, int v, int half) {
  const int group = v / (2 * half), i = v % (2 * half);
  const uint8_t byte = qs[group * half + i % half];
  return i < half ? byte & 0x0f : byte >> 4;
}

void pack_codes(const uint8_t* qs, int half, int64_t lanes, int64_t lane, uint8_t* chunks) {
  for (int c = 0; c < 4; ++c)
    for (int j = 0; j < 4; ++j)
      chunks[c * 4 * lanes + 4 * lane + j] = uint8_t(gguf_code(qs, 8 * c + j, half) | gguf_code(qs, 8 * c + 4 + j, half) << 4);
}

// The 32 codes of a packed lane, in value order.
void lane_codes(const uint8_t* chunks, int64_t lanes, int64_t lane, uint8_t* codes) {
  for (int c = 0; c < 4; ++c)
    for (int j = 0; j < 4; ++j) {
      const uint8_t byte = chunks[c * 4 * lanes + 4 * lane + j];
      codes[8 * c + j] = byte & 0x0f;
      codes[8 * c + 4 + j] = byte >> 4;
    }
}

}  // namespace

void pack_block(DType type, const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst) {
  const int64_t header = header_per_lane(type) * lanes;
  for (int64_t n = 0; n < lanes; ++n) {
    const uint8_t* block = gguf_blocks[n];
    if (type == DType::MXFP4) {
      dst[n] = block[0];
      pack_codes(block + 1, 16, lanes, n, dst + header);
    } else {
      for (int s = 0; s < 4; ++s) dst[s * lanes + n] = block[s];
      for (int h = 0; h < 2; ++h) pack_codes(block + 4 + 16 * h, 8, lanes, n, dst + header + h * 16 * lanes);
    }
  }
}

void unpack_block(DType type, const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* block) {
  const int64_t header = header_per_lane(type) * lanes;
  uint8_t codes[32];
  if (type == DType::MXFP4) {
    block[0] = src[lane];
    lane_codes(src + header, lanes, lane, codes);
    for (int j = 0; j < 16; ++j) block[1 + j] = uint8_t(codes[j] | codes[j + 16] << 4);
    return;
  }
  for (int s = 0; s < 4; ++s) block[s] = src[s * lanes + lane];
  for (int h = 0; h < 2; ++h) {
    lane_codes(src + header + h * 16 * lanes, lanes, lane, codes);
    for (int g = 0; g < 2; ++g)
      for (int j = 0; j < 8; ++j) block[4 + 16 * h + 8 * g + j] = uint8_t(codes[16 * g + j] | codes[16 * g + 8 + j] << 4);
  }
}

void dot_scalar(const PackedDotTask& task) {
  const int64_t cols = task.n_blocks * kActBlock;
  std::vector<uint8_t> row(size_t(dtype_row_bytes(task.type, cols)));
  std::vector<float> values(size_t(cols));
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    unpack_row(task.type, task.w, task.rows, cols, r, row.data());
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      float acc = 0.0f;
      for (int64_t b = 0; b < task.n_blocks; ++b) {
        const ActBlock& a = task.acts[t * task.n_blocks + b];
        int32_t dot[2] = {0, 0};
        if (task.type == DType::MXFP4) {
          const uint8_t* blk = row.data() + b * 17;
          for (int v = 0; v < 32; ++v) dot[0] += ref::kFp4Values[gguf_code(blk + 1, v, 16)] * a.q[v];
          acc = std::fma(float(dot[0]), ref::e8m0_half(blk[0]) * a.d, acc);
          continue;
        }
        const uint8_t* blk = row.data() + (b / 2) * 36;
        const int h = int(b & 1);
        for (int v = 0; v < 32; ++v) dot[v / 16] += ref::kFp4Values[gguf_code(blk + 4 + 16 * h, v, 8)] * a.q[v];
        for (int g = 0; g < 2; ++g) acc = std::fma(float(dot[g]), ref::ue4m3_half(blk[2 * h + g]) * a.d, acc);
      }
      task.y[t * task.y_stride + r] = acc;
    }
  }
}

}  // namespace ridge::cpu::fp4_packed
