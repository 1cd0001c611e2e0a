#include "kernels/cpu/packed_q6k.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu::q6k_packed {
namespace {

// A GGUF Q6_K super-block: ql[128] (low nibbles), qh[64] (high bits), 16 int8 scales, f16 d.
// Value v: half h = v / 128, w = v % 128, group g = w / 32, l = w % 32.
uint8_t value_of(const uint8_t* blk, int v) {
  const int half = v / 128, w = v % 128, g = w / 32, l = w % 32;
  const int low = (blk[64 * half + l + 32 * (g & 1)] >> (g & 2 ? 4 : 0)) & 0x0f;
  const int high = (blk[128 + 32 * half + l] >> (2 * g)) & 0x03;
  return uint8_t(low | high << 4);
}

void set_value(uint8_t* blk, int v, uint8_t q) {
  const int half = v / 128, w = v % 128, g = w / 32, l = w % 32;
  uint8_t& low = blk[64 * half + l + 32 * (g & 1)];
  low = uint8_t(g & 2 ? (low & 0x0f) | (q & 0x0f) << 4 : (low & 0xf0) | (q & 0x0f));
  uint8_t& high = blk[128 + 32 * half + l];
  high = uint8_t((high & ~(0x03 << (2 * g))) | ((q >> 4) & 0x03) << (2 * g));
}

}  // namespace

void pack_super(const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst) {
  for (int64_t n = 0; n < lanes; ++n) {
    const uint8_t* blk = gguf_blocks[n];
    std::memcpy(dst + 2 * n, blk + 208, 2);
    for (int k = 0; k < 16; ++k) dst[2 * lanes + k * lanes + n] = blk[192 + k];
    uint8_t q[kValues];
    for (int v = 0; v < kValues; ++v) q[v] = value_of(blk, v);
    for (int g = 0; g < 8; ++g) {
      uint8_t* group = dst + kHeaderPerLane * lanes + g * kGroupPerLane * lanes;
      const uint8_t* gq = q + 32 * g;
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i)
          group[j * 4 * lanes + 4 * n + i] = uint8_t((gq[8 * j + i] & 0x0f) | (gq[8 * j + 4 + i] & 0x0f) << 4);
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          uint8_t bits = 0;
          for (int k = 0; k < 4; ++k) bits = uint8_t(bits | ((gq[16 * h + 4 * k + i] >> 4) & 0x03) << (2 * k));
          group[16 * lanes + h * 4 * lanes + 4 * n + i] = bits;
        }
    }
  }
}

void unpack_super(const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* gguf_block) {
  std::memset(gguf_block, 0, 192);
  std::memcpy(gguf_block + 208, src + 2 * lane, 2);
  for (int k = 0; k < 16; ++k) gguf_block[192 + k] = src[2 * lanes + k * lanes + lane];
  for (int g = 0; g < 8; ++g) {
    const uint8_t* group = src + kHeaderPerLane * lanes + g * kGroupPerLane * lanes;
    for (int c = 0; c < 8; ++c)
      for (int i = 0; i < 4; ++i) {
        const uint8_t pair = group[(c / 2) * 4 * lanes + 4 * lane + i];
        const uint8_t high = group[16 * lanes + (c / 4) * 4 * lanes + 4 * lane + i];
        const uint8_t q = uint8_t((c & 1 ? pair >> 4 : pair & 0x0f) | ((high >> (2 * (c % 4))) & 0x03) << 4);
        set_value(gguf_block, 32 * g + 4 * c + i, q);
      }
  }
}

void dot_scalar(const PackedDotTask& task) {
  const int64_t cols = task.n_blocks * kActBlock, row_bytes = cols / kValues * kSuperBytes;
  std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    unpack_row(DType::Q6_K, task.w, task.rows, cols, r, row.data());
    quant_dot_scalar({DType::Q6_K, row.data(), row_bytes, task.n_blocks, 0, 1, task.acts, task.n_tokens, task.y + r,
                      task.y_stride});
  }
}

}  // namespace ridge::cpu::q6k_packed
