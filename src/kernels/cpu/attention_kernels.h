#pragma once
// Per-ISA bodies of the tiled paged attention over an f16 cache (chosen at run time by
// attention.cc), and what they share: the arithmetic attention.h defines.
#include <algorithm>
#include <cstdint>
#include <span>

#include "kernels/cpu/attention.h"

namespace ridge::cpu {

// The sixteen lane sums of a tile's exponentials added in a fixed tree.
inline float sum_lanes16(const float* lanes) {
  float a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = lanes[i] + lanes[i + 8];
  for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
  return (b[0] + b[2]) + (b[1] + b[3]);
}

// Token i's positions inside the tile, relative to its start: [lo, hi).
struct TileRange {
  int64_t lo, hi;
};
inline TileRange tile_range(const AttentionQueries& queries, int64_t i, int64_t tile) {
  const int64_t begin = tile * kAttentionTile;
  return {std::max<int64_t>(queries.first_positions[i], begin) - begin,
          std::min<int64_t>(int64_t(queries.positions[i]) + 1, begin + kAttentionTile) - begin};
}

// F16 cache through the portable scalar kernel, whatever the CPU (tests compare the wide one to it).
void attention_tile_f16_scalar(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                               int64_t partial_stride);

// y = exp_nonpositive(x) sixteen lanes at a time (tests compare it to the scalar function).
void exp_nonpositive_avx512(const float* x, int64_t n, float* y);

// F16 cache, block_size a multiple of 16, head_dim 16, 32, 64, 128 or 256: the scalar kernel's bits
// (attention_tile_simd.h, on AVX-512 and on AVX2).
inline bool attention_tile_f16_simd_fits(const ref::AttentionArgs& args, const KvLayerView& kv) {
  const int64_t d = args.head_dim;
  return kv.block_size % 16 == 0 && (d == 16 || d == 32 || d == 64 || d == 128 || d == 256);
}
void attention_tile_f16_avx2(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                             const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                             int64_t partial_stride);
// y = exp_nonpositive(x) eight lanes at a time.
void exp_nonpositive_avx2(const float* x, int64_t n, float* y);
void attention_tile_f16_avx512(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                               int64_t partial_stride);

}  // namespace ridge::cpu
