#include "kernels/cpu/packed_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/cpu/packed_fp4.h"
#include "kernels/cpu/packed_q4k.h"
#include "kernels/cpu/packed_q6k.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {
namespace {

// Bytes of a block's scale (+ minimum) header and of its quants.
struct BlockParts {
  int64_t header, quants;
  int64_t bytes() const { return header + quants; }
};
BlockParts parts_of(DType type) {
  switch (type) {
    case DType::Q4_0: return {2, 16};
    case DType::Q4_1: return {4, 16};
    case DType::Q8_0: return {2, 32};
    case DType::Q6_K: return {q6k_packed::kHeaderPerLane, q6k_packed::kSuperBytes - q6k_packed::kHeaderPerLane};
    case DType::Q4_K: case DType::Q5_K:
      return {q4k_packed::kHeaderPerLane, q4k_packed::super_bytes(type) - q4k_packed::kHeaderPerLane};
    case DType::MXFP4: case DType::NVFP4:
      return {fp4_packed::header_per_lane(type), fp4_packed::block_bytes(type) - fp4_packed::header_per_lane(type)};
    default: fail("no packed layout for {}", dtype_name(type));
  }
}

// Values per block of the layout: 32, a K-quant super-block, or an NVFP4 block.
int64_t block_values(DType type) {
  if (type == DType::Q6_K || q4k_packed::is_q4k(type)) return 256;
  return fp4_packed::is_fp4(type) ? fp4_packed::block_values(type) : kActBlock;
}

// Where row `row` lives: its tile's first byte, the tile's row count and the row's lane.
struct TileSpot {
  int64_t offset, lanes, lane;
};
TileSpot spot_of(int64_t rows, int64_t row_bytes, int64_t row) {
  const int64_t first = row / kTileRows * kTileRows;
  return {first * row_bytes, std::min(kTileRows, rows - first), row - first};
}

// Value v (0..31) of a GGUF Q4 block's quants: low nibbles hold 0..15, high nibbles 16..31.
uint8_t q4_value(const uint8_t* qs, int v) { return v < 16 ? qs[v] & 0x0f : qs[v - 16] >> 4; }

// One block of `lanes` rows: GGUF blocks -> the tile's block (pack) or back (unpack, one lane).
void pack_block(DType type, const uint8_t* const* src_blocks, int64_t lanes, uint8_t* dst) {
  if (type == DType::Q6_K) return q6k_packed::pack_super(src_blocks, lanes, dst);
  if (q4k_packed::is_q4k(type)) return q4k_packed::pack_super(type, src_blocks, lanes, dst);
  if (fp4_packed::is_fp4(type)) return fp4_packed::pack_block(type, src_blocks, lanes, dst);
  const BlockParts p = parts_of(type);
  uint8_t* quants = dst + p.header * lanes;
  for (int64_t n = 0; n < lanes; ++n) {
    const uint8_t* block = src_blocks[n];
    std::memcpy(dst + 2 * n, block, 2);
    if (type == DType::Q4_1) std::memcpy(dst + 2 * lanes + 2 * n, block + 2, 2);
    const uint8_t* qs = block + p.header;
    if (type == DType::Q8_0) {
      for (int c = 0; c < 8; ++c)
        for (int j = 0; j < 4; ++j) quants[c * 4 * lanes + 4 * n + j] = uint8_t(qs[4 * c + j] ^ 0x80);
    } else {
      for (int c = 0; c < 4; ++c)
        for (int j = 0; j < 4; ++j)
          quants[c * 4 * lanes + 4 * n + j] = uint8_t(q4_value(qs, 8 * c + j) | q4_value(qs, 8 * c + 4 + j) << 4);
    }
  }
}

void unpack_block(DType type, const uint8_t* src, int64_t lanes, int64_t lane, uint8_t* block) {
  if (type == DType::Q6_K) return q6k_packed::unpack_super(src, lanes, lane, block);
  if (q4k_packed::is_q4k(type)) return q4k_packed::unpack_super(type, src, lanes, lane, block);
  if (fp4_packed::is_fp4(type)) return fp4_packed::unpack_block(type, src, lanes, lane, block);
  const BlockParts p = parts_of(type);
  std::memcpy(block, src + 2 * lane, 2);
  if (type == DType::Q4_1) std::memcpy(block + 2, src + 2 * lanes + 2 * lane, 2);
  const uint8_t* quants = src + p.header * lanes + 4 * lane;
  uint8_t* qs = block + p.header;
  if (type == DType::Q8_0) {
    for (int c = 0; c < 8; ++c)
      for (int j = 0; j < 4; ++j) qs[4 * c + j] = uint8_t(quants[c * 4 * lanes + j] ^ 0x80);
    return;
  }
  uint8_t values[32];
  for (int c = 0; c < 4; ++c)
    for (int j = 0; j < 4; ++j) {
      const uint8_t byte = quants[c * 4 * lanes + j];
      values[8 * c + j] = byte & 0x0f;
      values[8 * c + 4 + j] = byte >> 4;
    }
  for (int i = 0; i < 16; ++i) qs[i] = uint8_t(values[i] | values[i + 16] << 4);
}

}  // namespace

void tile_activations(const ActBlock* acts, int64_t n_tokens, int64_t n_blocks, int64_t j, int8_t* q, float* scales) {
  const int64_t first = j * kTileTokens, valid = std::min(kTileTokens, n_tokens - first);
  for (int64_t b = 0; b < n_blocks; ++b) {
    int8_t* qb = q + b * kTiledBlockBytes;
    float* sb = scales + b * kTiledBlockScales;
    for (int64_t t = 0; t < kTileTokens; ++t) {
      if (t < valid) {
        const ActBlock& a = acts[(first + t) * n_blocks + b];
        std::memcpy(qb + t * kActBlock, a.q, kActBlock);
        sb[t] = a.d, sb[kTileTokens + t] = a.s;
      } else {
        std::memset(qb + t * kActBlock, 0, kActBlock);
        sb[t] = 0, sb[kTileTokens + t] = 0;
      }
    }
  }
}

bool packable(DType type) {
  return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0 || type == DType::Q6_K ||
         q4k_packed::is_q4k(type) || fp4_packed::is_fp4(type);
}

void pack_rows(DType type, void* data, int64_t rows, int64_t cols) {
  const BlockParts p = parts_of(type);
  const int64_t n_blocks = cols / block_values(type), row_bytes = n_blocks * p.bytes();
  const int64_t n_tiles = (rows + kTileRows - 1) / kTileRows;
#pragma omp parallel for schedule(static)  // at load: tiles are independent
  for (int64_t i = 0; i < n_tiles; ++i) {
    thread_local std::vector<uint8_t> tile;
    tile.resize(size_t(kTileRows * row_bytes));
    const int64_t first = i * kTileRows, lanes = std::min(kTileRows, rows - first);
    uint8_t* dst = static_cast<uint8_t*>(data) + first * row_bytes;
    std::memcpy(tile.data(), dst, size_t(lanes * row_bytes));
    const uint8_t* blocks[kTileRows];
    for (int64_t b = 0; b < n_blocks; ++b) {
      for (int64_t n = 0; n < lanes; ++n) blocks[n] = tile.data() + n * row_bytes + b * p.bytes();
      pack_block(type, blocks, lanes, dst + b * lanes * p.bytes());
    }
  }
}

void unpack_row(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, uint8_t* gguf_row) {
  const BlockParts p = parts_of(type);
  const int64_t n_blocks = cols / block_values(type), row_bytes = n_blocks * p.bytes();
  const TileSpot s = spot_of(rows, row_bytes, row);
  const uint8_t* tile = static_cast<const uint8_t*>(matrix) + s.offset;
  for (int64_t b = 0; b < n_blocks; ++b)
    unpack_block(type, tile + b * s.lanes * p.bytes(), s.lanes, s.lane, gguf_row + b * p.bytes());
}

void unpack_row_range(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, int64_t begin, int64_t n,
                      uint8_t* gguf_blocks) {
  const BlockParts p = parts_of(type);
  const int64_t n_blocks = cols / block_values(type), row_bytes = n_blocks * p.bytes();
  const TileSpot s = spot_of(rows, row_bytes, row);
  const uint8_t* tile = static_cast<const uint8_t*>(matrix) + s.offset;
  const int64_t first = begin / block_values(type), count = n / block_values(type);
  for (int64_t b = 0; b < count; ++b)
    unpack_block(type, tile + (first + b) * s.lanes * p.bytes(), s.lanes, s.lane, gguf_blocks + b * p.bytes());
}

void dequantize_packed_row(DType type, const void* matrix, int64_t rows, int64_t cols, int64_t row, float* out) {
  thread_local std::vector<uint8_t> gguf_row;
  gguf_row.resize(size_t(dtype_row_bytes(type, cols)));
  unpack_row(type, matrix, rows, cols, row, gguf_row.data());
  ref::dequantize_row(type, gguf_row.data(), out, cols);
}

void packed_dot_scalar(const PackedDotTask& task) {
  if (task.type == DType::Q6_K) return q6k_packed::dot_scalar(task);
  if (q4k_packed::is_q4k(task.type)) return q4k_packed::dot_scalar(task);
  if (fp4_packed::is_fp4(task.type)) return fp4_packed::dot_scalar(task);
  const BlockParts p = parts_of(task.type);
  const int64_t row_bytes = task.n_blocks * p.bytes();
  std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
  for (int64_t r = task.row_begin; r < task.row_end; ++r) {
    unpack_row(task.type, task.w, task.rows, task.n_blocks * kActBlock, r, row.data());
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      float acc = 0.0f;
      for (int64_t b = 0; b < task.n_blocks; ++b) {
        const uint8_t* block = row.data() + b * p.bytes();
        const ActBlock& a = task.acts[t * task.n_blocks + b];
        const uint8_t* qs = block + p.header;
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i) {
          const int32_t w = task.type == DType::Q8_0   ? int8_t(qs[i])
                            : task.type == DType::Q4_0 ? q4_value(qs, i) - 8
                                                       : q4_value(qs, i);
          dot += w * a.q[i];
        }
        uint16_t d, m;
        std::memcpy(&d, block, 2);
        std::memcpy(&m, block + 2, 2);
        const float dw = f16_to_f32(d);
        acc = std::fma(float(dot), dw * a.d, acc);
        if (task.type == DType::Q4_1) acc = std::fma(f16_to_f32(m), a.s, acc);
      }
      task.y[t * task.y_stride + r] = acc;
    }
  }
}

}  // namespace ridge::cpu
