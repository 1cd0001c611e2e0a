// The packed-layout dot product on AMX tiles, for sixteen tokens at a time: each 32-value block is
// one tile multiply (16 tokens x 16 weight rows, exact int32 block sums), then the block's scales
// enter on the vector units in the order of packed_layout.h, so the result is bit-identical to the
// VNNI kernel's. A packed tile's bytes already are in the AMX "B" operand's order; once per tile of
// rows they are turned into signed values (Q4_0's q - 8, Q8_0's w; Q4_1 stays unsigned), so the
// tile multiply yields Σ w·a itself and the vector units only scale it. Tokens past the last full
// tile of sixteen and rows of a partial tile go to the VNNI kernel.
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
// Tiles (GCC's intrinsics take the tile number as a literal): 0, 1 block sums; 2, 3 activations; 4, 5 weights.
enum { kC0 = 0, kC1 = 1, kA0 = 2, kA1 = 3, kB0 = 4, kB1 = 5 };

// GCC's tile intrinsics are asm statements that do not tell the compiler they read memory: without
// this, stores to a tile configuration or operand buffer may be moved past the instruction reading it.
inline void memory_barrier() { __asm__ volatile("" ::: "memory"); }

void configure_tiles() {
  TileConfig cfg;
  for (int c : {kC0, kC1}) cfg.colsb[c] = 64, cfg.rows[c] = 16;   // 16 tokens x 16 rows of int32
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

// The scales of block b enter acc (16 tokens, each a vector over the 16 rows) from its block sums.
template <DType T>
inline void scale_block(const int32_t* sums, const uint8_t* tile, int64_t b, const ActBlock* acts, int64_t n_blocks,
                        __m512* acc) {
  const uint8_t* p = tile + b * PackedGeometry<T>::tile_block_bytes;
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  __m512 m = _mm512_setzero_ps();
  if constexpr (T == DType::Q4_1) m = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)));
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) {
    const ActBlock& a = acts[t * n_blocks + b];
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * t));
    acc[t] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, _mm512_set1_ps(a.d)), acc[t]);
    if constexpr (T == DType::Q4_1) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.s), acc[t]);
  }
}

// Σ w·a: signed x signed, except Q4_1's unsigned quants.
#define RIDGE_TILE_DOT(c, a, b) \
  if constexpr (T == DType::Q4_1) _tile_dpbsud(c, a, b); \
  else _tile_dpbssd(c, a, b)

// Sixteen tokens (from acts) against one full row tile; B operands at `ops`, one block apart.
template <DType T>
void token_tile(const uint8_t* tile, const uint8_t* ops, int64_t n_blocks, const ActBlock* acts,
                float* y, int64_t y_stride) {
  alignas(64) int32_t sums[2][256];
  __m512 acc[16];
#pragma GCC unroll 16
  for (auto& a : acc) a = _mm512_setzero_ps();
  const int64_t act_stride = n_blocks * int64_t(sizeof(ActBlock));
  int64_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    _tile_loadd(2, acts[b].q, act_stride);
    _tile_loadd(4, ops + b * kOperandBytes, 64);
    _tile_loadd(3, acts[b + 1].q, act_stride);
    _tile_loadd(5, ops + (b + 1) * kOperandBytes, 64);
    _tile_zero(0);
    _tile_zero(1);
    RIDGE_TILE_DOT(0, 2, 4);
    RIDGE_TILE_DOT(1, 3, 5);
    _tile_stored(0, sums[0], 64);
    scale_block<T>(sums[0], tile, b, acts, n_blocks, acc);
    _tile_stored(1, sums[1], 64);
    scale_block<T>(sums[1], tile, b + 1, acts, n_blocks, acc);
  }
  if (b < n_blocks) {
    _tile_loadd(2, acts[b].q, act_stride);
    _tile_loadd(4, ops + b * kOperandBytes, 64);
    _tile_zero(0);
    RIDGE_TILE_DOT(0, 2, 4);
    _tile_stored(0, sums[0], 64);
    scale_block<T>(sums[0], tile, b, acts, n_blocks, acc);
  }
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}
#undef RIDGE_TILE_DOT

template <DType T>
void run(const PackedDotTask& task) {
  const int64_t n_blocks = task.n_blocks, row_bytes = n_blocks * PackedGeometry<T>::block_bytes;
  const int64_t full_tokens = task.n_tokens / 16 * 16;
  const int64_t full_rows_end = std::min(task.row_end, task.rows / kTileRows * kTileRows);
  thread_local std::vector<uint8_t> operands;
  if (full_tokens > 0 && full_rows_end > task.row_begin) {
    configure_tiles();
    constexpr int64_t kTokenChunk = 128;  // a chunk of activations stays in L2 while the tiles stream by
    for (int64_t c0 = 0; c0 < full_tokens; c0 += kTokenChunk) {
      const int64_t c_end = std::min(full_tokens, c0 + kTokenChunk);
      for (int64_t first = task.row_begin; first < full_rows_end; first += kTileRows) {
        const uint8_t* tile = task.w + first * row_bytes;
        operands.resize(size_t(n_blocks * kOperandBytes));
        make_operands<T>(tile, n_blocks, operands.data());
        memory_barrier();
        for (int64_t t = c0; t < c_end; t += 16)
          token_tile<T>(tile, operands.data(), n_blocks, task.acts + t * n_blocks, task.y + t * task.y_stride + first,
                        task.y_stride);
      }
    }
    _tile_release();
  }
  // What AMX did not take: a partial row tile for the full token tiles, and the last tokens for all rows.
  if (full_rows_end < task.row_end && full_tokens > 0) {
    PackedDotTask rest = task;
    rest.row_begin = std::max(full_rows_end, task.row_begin);
    rest.n_tokens = full_tokens;
    packed_dot_avx512vnni(rest);
  }
  if (full_tokens < task.n_tokens) {
    PackedDotTask rest = task;
    rest.acts += full_tokens * n_blocks;
    rest.n_tokens -= full_tokens;
    rest.y += full_tokens * task.y_stride;
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
    default: break;
  }
}

}  // namespace ridge::cpu
