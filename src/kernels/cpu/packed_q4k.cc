#include "kernels/cpu/packed_q4k.h"

#include <cstring>
#include <vector>

#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu::q4k_packed {
namespace {

// A GGUF Q4_K super-block: f16 d, f16 dmin, 12 scale bytes, qs[128]; Q5_K has qh[32] before qs.
// Value v: sub-block s = v / 32, l = v % 32; its nibble is qs[32 (s / 2) + l] (high when s is odd),
// its fifth bit bit s of qh[l].
struct GgufSuper {
  DType type;
  int64_t qs_offset() const { return type == DType::Q5_K ? 48 : 16; }

  uint8_t value(const uint8_t* blk, int v) const {
    const int s = v / 32, l = v % 32;
    const int low = (blk[qs_offset() + 32 * (s / 2) + l] >> (s & 1 ? 4 : 0)) & 0x0f;
    const int high = type == DType::Q5_K ? ((blk[16 + l] >> s) & 1) << 4 : 0;
    return uint8_t(low | high);
  }

  void set_value(uint8_t* blk, int v, uint8_t q) const {
    const int s = v / 32, l = v % 32;
    uint8_t& low = blk[qs_offset() + 32 * (s / 2) + l];
    low = uint8_t(s & 1 ? (low & 0x0f) | (q & 0x0f) << 4 : (low & 0xf0) | (q & 0x0f));
    if (type == DType::Q5_K) blk[16 + l] = uint8_t((blk[16 + l] & ~(1 << s)) | ((q >> 4) & 1) << s);
  }
};

}  // namespace

void pack_super(DType type, const uint8_t* const* gguf_blocks, int64_t lanes, uint8_t* dst) {
  const GgufSuper gguf{type};
  const int64_t group = group_bytes(type);
  for (int64_t n = 0; n < lanes; ++n) {
    const uint8_t* blk = gguf_blocks[n];
    std::memcpy(dst + 2 * n, blk, 2);
    std::memcpy(dst + 2 * lanes + 2 * n, blk + 2, 2);
    for (int k = 0; k < 12; ++k) dst[4 * lanes + k * lanes + n] = blk[4 + k];
    uint8_t q[kValues];
    for (int v = 0; v < kValues; ++v) q[v] = gguf.value(blk, v);
    for (int g = 0; g < 8; ++g) {
      uint8_t* gp = dst + kHeaderPerLane * lanes + g * group * lanes;
      const uint8_t* gq = q + 32 * g;
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i)
          gp[j * 4 * lanes + 4 * n + i] = uint8_t((gq[8 * j + i] & 0x0f) | (gq[8 * j + 4 + i] & 0x0f) << 4);
      if (type != DType::Q5_K) continue;
      for (int i = 0; i < 4; ++i) {
        uint8_t bits = 0;
        for (int c = 0; c < 8; ++c) bits = uint8_t(bits | ((gq[4 * c + i] >> 4) & 1) << c);
        gp[16 * lanes + 4 * n + i] = bits;
      }
    }
  }
}

void unpack_super(DType type, const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* gguf_block) {
  const GgufSuper gguf{type};
  const int64_t group = group_bytes(type);
  std::memset(gguf_block, 0, size_t(super_bytes(type)));
  std::memcpy(gguf_block, src + 2 * lane, 2);
  std::memcpy(gguf_block + 2, src + 2 * lanes + 2 * lane, 2);
  for (int k = 0; k < 12; ++k) gguf_block[4 + k] = src[4 * lanes + k * lanes + lane];
  for (int g = 0; g < 8; ++g) {
    const uint8_t* gp = src + kHeaderPerLane * lanes + g * group * lanes;
    for (int c = 0; c < 8; ++c)
      for (int i = 0; i < 4; ++i) {
        const uint8_t pair = gp[(c / 2) * 4 * lanes + 4 * lane + i];
        uint8_t q = c & 1 ? pair >> 4 : pair & 0x0f;
        if (type == DType::Q5_K) q = uint8_t(q | ((gp[16 * lanes + 4 * lane + i] >> c) & 1) << 4);
        gguf.set_value(gguf_block, 32 * g + 4 * c + i, q);
      }
  }
}

void dot_scalar(const PackedDotTask& task) {
  const int64_t cols = task.n_blocks * kActBlock, row_bytes = cols / kValues * super_bytes(task.type);
  std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    unpack_row(task.type, task.w, task.rows, cols, r, row.data());
    quant_dot_scalar({task.type, row.data(), row_bytes, task.n_blocks, 0, 1, task.acts, task.n_tokens, task.y + r,
                      task.y_stride});
  }
}

}  // namespace ridge::cpu::q4k_packed
