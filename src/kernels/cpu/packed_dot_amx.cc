// The packed-layout dot product on AMX tiles, for sixteen tokens at a time: each 32-value block is
// one tile multiply (16 tokens x 16 weight rows, exact int32 block sums), then the block's scales
// enter on the vector units in the order of packed_layout.h, so the result is bit-identical to the
// VNNI kernel's. A packed tile's bytes already are in the AMX "B" operand's order; once per tile of
// rows they are turned into signed values (Q4_0's q - 8, Q8_0's w; Q4_1 stays unsigned), so the
// tile multiply yields Σ w·a itself and the vector units only scale it. The activations come tiled
// (TiledActs: sixteen tokens' block contiguous, zeros past the last token); rows of a partial tile
// go to the VNNI kernel.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu {
namespace {

constexpr int64_t kOperandBytes = 512;  // one block's B operand: 8 rows of 16 lanes x 4 values

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
// Tiles (GCC's intrinsics take the tile number as a literal): 0-3 block sums; 4, 5 activations; 6, 7 weights.
enum { kC0 = 0, kC1 = 1, kC2 = 2, kC3 = 3, kA0 = 4, kA1 = 5, kB0 = 6, kB1 = 7 };

// GCC's tile intrinsics are asm statements that do not tell the compiler they read memory: without
// this, stores to a tile configuration or operand buffer may be moved past the instruction reading it.
inline void memory_barrier() { __asm__ volatile("" ::: "memory"); }

void configure_tiles() {
  TileConfig cfg;
  for (int c : {kC0, kC1, kC2, kC3}) cfg.colsb[c] = 64, cfg.rows[c] = 16;   // 16 tokens x 16 rows of int32
  for (int a : {kA0, kA1}) cfg.colsb[a] = 32, cfg.rows[a] = 16;   // 16 tokens x one block
  for (int b : {kB0, kB1}) cfg.colsb[b] = 64, cfg.rows[b] = 8;    // one block x 16 rows
  memory_barrier();
  _tile_loadconfig(&cfg);
}

// Every block of one row tile as B operands: Q4 nibbles split (Q4_0 minus 8), Q8_0 back to signed.
template <DType T>
void make_operands(const uint8_t* tile, int64_t n_blocks, uint8_t* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), eight = _mm512_set1_epi8(8), top = _mm512_set1_epi8(char(0x80));
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* q = tile + b * PackedGeometry<T>::tile_block_bytes + PackedGeometry<T>::header * kTileRows;
    uint8_t* o = out + b * kOperandBytes;
    if constexpr (T == DType::Q8_0) {
      for (int c = 0; c < 8; ++c) _mm512_storeu_si512(o + 64 * c, _mm512_xor_si512(_mm512_loadu_si512(q + 64 * c), top));
      continue;
    }
    for (int c = 0; c < 4; ++c) {
      const __m512i raw = _mm512_loadu_si512(q + 64 * c);
      __m512i lo = _mm512_and_si512(raw, low4), hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
      if constexpr (T == DType::Q4_0) lo = _mm512_sub_epi8(lo, eight), hi = _mm512_sub_epi8(hi, eight);
      _mm512_storeu_si512(o + 128 * c, lo);
      _mm512_storeu_si512(o + 128 * c + 64, hi);
    }
  }
}

// The scales of block b enter acc (16 tokens, each a vector over the 16 rows) from its block sums;
// `scales` holds the token tile's 16 activation scales d of this block, then its 16 Σ terms s.
template <DType T>
inline void scale_block(const int32_t* sums, const uint8_t* tile, int64_t b, const float* scales, __m512* acc) {
  const uint8_t* p = tile + b * PackedGeometry<T>::tile_block_bytes;
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  __m512 m = _mm512_setzero_ps();
  if constexpr (T == DType::Q4_1) m = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)));
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) {
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * t));
    acc[t] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, _mm512_set1_ps(scales[t])), acc[t]);
    if constexpr (T == DType::Q4_1) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(scales[16 + t]), acc[t]);
  }
}

// Σ w·a: signed x signed, except Q4_1's unsigned quants.
#define RIDGE_TILE_DOT(c, a, b) \
  if constexpr (T == DType::Q4_1) _tile_dpbsud(c, a, b); \
  else _tile_dpbssd(c, a, b)

// One tile of sixteen tokens (`aq`, `scales`: the tiled activations of that tile) against one full
// row tile; B operands at `ops`, one block apart; the first `valid` tokens are written.
// The tile unit and the vector units work on different blocks: block b's product goes to sum tile
// b % 4 and is stored, while the vector units scale block b - 2, whose sums have landed by then;
// the accumulators never leave registers. Blocks are scaled in order, so the bits are unchanged.
template <DType T>
void token_tile(const uint8_t* tile, const uint8_t* ops, int64_t n_blocks, const int8_t* aq, const float* scales,
                float* y, int64_t y_stride, int64_t valid) {
  alignas(64) int32_t sums[4][256];
  __m512 acc[16];
#pragma GCC unroll 16
  for (auto& a : acc) a = _mm512_setzero_ps();
#define RIDGE_ISSUE(c, a, w, blk)                            \
  _tile_loadd(a, aq + (blk) * kTiledBlockBytes, kActBlock);  \
  _tile_loadd(w, ops + (blk) * kOperandBytes, 64);           \
  _tile_zero(c);                                             \
  RIDGE_TILE_DOT(c, a, w);                                   \
  _tile_stored(c, sums[c], 64);                              \
  memory_barrier()
#define RIDGE_SCALE(c, blk) scale_block<T>(sums[c], tile, blk, scales + (blk) * kTiledBlockScales, acc)
  int64_t b = 0;
  if (n_blocks >= 4) {
    RIDGE_ISSUE(0, 4, 6, 0);
    RIDGE_ISSUE(1, 5, 7, 1);
    for (; b + 6 <= n_blocks; b += 4) {  // blocks b, b+1 issued; issue b+2..b+5, scale b..b+3
      RIDGE_ISSUE(2, 4, 6, b + 2);
      RIDGE_SCALE(0, b);
      RIDGE_ISSUE(3, 5, 7, b + 3);
      RIDGE_SCALE(1, b + 1);
      RIDGE_ISSUE(0, 4, 6, b + 4);
      RIDGE_SCALE(2, b + 2);
      RIDGE_ISSUE(1, 5, 7, b + 5);
      RIDGE_SCALE(3, b + 3);
    }
    RIDGE_SCALE(0, b);  // blocks b, b+1 were issued last
    RIDGE_SCALE(1, b + 1);
    b += 2;
  }
  for (; b < n_blocks; ++b) {
    RIDGE_ISSUE(0, 4, 6, b);
    RIDGE_SCALE(0, b);
  }
#undef RIDGE_ISSUE
#undef RIDGE_SCALE
  if (valid == 16) {
#pragma GCC unroll 16
    for (int t = 0; t < 16; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
  } else {
    for (int t = 0; t < valid; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
  }
}
#undef RIDGE_TILE_DOT

template <DType T>
void run(const PackedDotTask& task) {
  const int64_t n_blocks = task.n_blocks, row_bytes = n_blocks * PackedGeometry<T>::block_bytes;
  const int64_t n_tiles = (task.n_tokens + kTileTokens - 1) / kTileTokens;
  const int64_t full_rows_end = std::min(task.row_end, task.rows / kTileRows * kTileRows);
  if (n_tiles > 0 && full_rows_end > task.row_begin) {
    TiledActs tiled = task.tiled;
    thread_local std::vector<int8_t> own_q;
    thread_local std::vector<float> own_scales;
    if (!tiled.q) {  // a caller without matmul's shared copy (tests)
      own_q.resize(size_t(n_tiles * n_blocks * kTiledBlockBytes));
      own_scales.resize(size_t(n_tiles * n_blocks * kTiledBlockScales));
      for (int64_t j = 0; j < n_tiles; ++j)
        tile_activations(task.acts, task.n_tokens, n_blocks, j, own_q.data() + j * n_blocks * kTiledBlockBytes,
                         own_scales.data() + j * n_blocks * kTiledBlockScales);
      tiled = {own_q.data(), own_scales.data()};
    }
    thread_local std::vector<uint8_t> operands;
    operands.resize(size_t(n_blocks * kOperandBytes));
    configure_tiles();
    constexpr int64_t kChunkTiles = 8;  // 128 tokens of activations stay in L2 while the row tiles stream by
    for (int64_t c0 = 0; c0 < n_tiles; c0 += kChunkTiles) {
      const int64_t c_end = std::min(n_tiles, c0 + kChunkTiles);
      for (int64_t first = task.row_begin; first < full_rows_end; first += kTileRows) {
        const uint8_t* tile = task.w + first * row_bytes;
        make_operands<T>(tile, n_blocks, operands.data());
        memory_barrier();
        for (int64_t j = c0; j < c_end; ++j)
          token_tile<T>(tile, operands.data(), n_blocks, tiled.q + j * n_blocks * kTiledBlockBytes,
                        tiled.scales + j * n_blocks * kTiledBlockScales, task.y + j * kTileTokens * task.y_stride + first,
                        task.y_stride, std::min(kTileTokens, task.n_tokens - j * kTileTokens));
      }
    }
    _tile_release();
  }
  if (full_rows_end < task.row_end) {  // a partial tile of rows: the VNNI kernel, for every token
    PackedDotTask rest = task;
    rest.row_begin = std::max(full_rows_end, task.row_begin);
    packed_dot_avx512vnni(rest);
  }
}

}  // namespace

bool amx_usable() {
  static const bool usable = [] {
    const char* env = std::getenv("RIDGE_AMX");
    if (env && std::strcmp(env, "0") == 0) return false;
    if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) return false;
    constexpr long kRequestPermission = 0x1023, kTileData = 18;  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return usable;
}

void packed_dot_amx(const PackedDotTask& task) {
  switch (task.type) {
    case DType::Q4_0: return run<DType::Q4_0>(task);
    case DType::Q4_1: return run<DType::Q4_1>(task);
    case DType::Q8_0: return run<DType::Q8_0>(task);
    default: return packed_dot_avx512vnni(task);  // the K-quants, FP4: no AMX kernel yet
  }
}

}  // namespace ridge::cpu
