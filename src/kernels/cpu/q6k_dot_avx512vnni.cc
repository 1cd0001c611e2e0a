// Q6_K against many tokens on 512-bit registers, sixteen weight rows per register (one per lane).
// A tile of sixteen rows is unpacked once per chunk of tokens into VNNI operands: for each 32-value
// group, eight registers whose lane n holds four consecutive 6-bit values of row n (unsigned), and
// the rows' two half scales. Each token then costs eight vpdpbusd per group for all sixteen rows,
// against one broadcast dword of its activations each. The arithmetic is quant_dot_scalar.cc's:
// per group the exact integer sc_lo * Σ_lo (q - 32)·a + sc_hi * Σ_hi (q - 32)·a (the -32 enters
// through the activations' half sums), then acc = fma(float(I), d * a.d, acc) group after group,
// so the result is the same bits as every other Q6_K kernel's.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {
namespace {

constexpr int64_t kRows = 16;
constexpr int64_t kSuperBytes = 210;
constexpr int64_t kTokenChunk = 128;  // activations of a chunk stay in L2 while the tiles pass

// One group of a tile: eight chunks of four values for sixteen rows, and the rows' half scales.
struct alignas(64) GroupOperands {
  __m512i chunk[8];
  __m512i scale_lo, scale_hi;
};

// The 32 unsigned 6-bit values of group g (0..7) of one Q6_K super-block, in order.
void group_values(const uint8_t* blk, int group, uint8_t* out) {
  const int half = group / 4, g = group % 4;
  const uint8_t* ql = blk + 64 * half + 32 * (g & 1);
  const uint8_t* qh = blk + 128 + 32 * half;
  for (int l = 0; l < 32; ++l) out[l] = uint8_t(((ql[l] >> (g & 2 ? 4 : 0)) & 0x0f) | ((qh[l] >> (2 * g)) & 0x03) << 4);
}

// The tile of rows [r0, r0 + 16) as operands: (n_groups) groups and (n_super) x 16 scales d.
void build_tile(const QuantDotTask& task, int64_t r0, GroupOperands* groups, float* d) {
  const int64_t n_super = task.n_blocks / 8;
  alignas(64) uint32_t values[kRows][8];
  for (int64_t b = 0; b < n_super; ++b) {
    for (int64_t n = 0; n < kRows; ++n) {
      uint16_t h;
      std::memcpy(&h, task.w + (r0 + n) * task.row_bytes + b * kSuperBytes + 208, 2);
      d[b * kRows + n] = _cvtsh_ss(h);
    }
    for (int g = 0; g < 8; ++g) {
      GroupOperands& op = groups[b * 8 + g];
      alignas(64) int32_t lo[kRows], hi[kRows];
      for (int64_t n = 0; n < kRows; ++n) {
        const uint8_t* blk = task.w + (r0 + n) * task.row_bytes + b * kSuperBytes;
        group_values(blk, g, reinterpret_cast<uint8_t*>(values[n]));
        const auto* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * (g / 4) + 2 * (g % 4));
        lo[n] = sc[0];
        hi[n] = sc[1];
      }
      // Chunk c, lane n: values 4c..4c+3 of row n (a 16 x 8 dword transpose).
      for (int c = 0; c < 8; ++c) {
        alignas(64) uint32_t lanes[kRows];
        for (int64_t n = 0; n < kRows; ++n) lanes[n] = values[n][c];
        op.chunk[c] = _mm512_load_si512(lanes);
      }
      op.scale_lo = _mm512_load_si512(lo);
      op.scale_hi = _mm512_load_si512(hi);
    }
  }
}

// Σ of each 16-value half of every activation block of a token: the -32 offset of the weights.
void half_sums(const ActBlock* acts, int64_t n_blocks, int32_t* out) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    int32_t lo = 0, hi = 0;
    for (int l = 0; l < 16; ++l) lo += acts[b].q[l], hi += acts[b].q[16 + l];
    out[2 * b] = lo;
    out[2 * b + 1] = hi;
  }
}

inline __m512i broadcast_dword(const int8_t* q, int c) {
  int32_t v;
  std::memcpy(&v, q + 4 * c, 4);
  return _mm512_set1_epi32(v);
}

// NT tokens against one built tile: acc lanes are the tile's rows.
template <int NT>
void tokens_tile(const GroupOperands* groups, const float* d, int64_t n_blocks, const ActBlock* acts,
                 const int32_t* sums, float* y, int64_t y_stride) {
  __m512 acc[NT];
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const GroupOperands& op = groups[b];
    const __m512 dv = _mm512_loadu_ps(d + (b / 8) * kRows);
#pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) {
      const ActBlock& a = acts[j * n_blocks + b];
      __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
      for (int c = 0; c < 4; ++c) lo = _mm512_dpbusd_epi32(lo, op.chunk[c], broadcast_dword(a.q, c));
      for (int c = 4; c < 8; ++c) hi = _mm512_dpbusd_epi32(hi, op.chunk[c], broadcast_dword(a.q, c));
      const int32_t* s = sums + (j * n_blocks + b) * 2;
      lo = _mm512_sub_epi32(lo, _mm512_set1_epi32(32 * s[0]));
      hi = _mm512_sub_epi32(hi, _mm512_set1_epi32(32 * s[1]));
      const __m512i i = _mm512_add_epi32(_mm512_mullo_epi32(lo, op.scale_lo), _mm512_mullo_epi32(hi, op.scale_hi));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_mul_ps(dv, _mm512_set1_ps(a.d)), acc[j]);
    }
  }
  for (int j = 0; j < NT; ++j) _mm512_storeu_ps(y + j * y_stride, acc[j]);
}

}  // namespace

int64_t q6k_dot_tiles_avx512(const QuantDotTask& task) {
  const int64_t n_tiles = (task.row_end - task.row_begin) / kRows;
  if (n_tiles == 0) return task.row_begin;
  const int64_t n_blocks = task.n_blocks;
  thread_local std::vector<GroupOperands> groups;
  thread_local std::vector<float> d;
  thread_local std::vector<int32_t> sums;
  groups.resize(size_t(n_blocks));
  d.resize(size_t(n_blocks / 8 * kRows));
  sums.resize(size_t(task.n_tokens * n_blocks * 2));
  for (int64_t t = 0; t < task.n_tokens; ++t) half_sums(task.acts + t * n_blocks, n_blocks, sums.data() + t * n_blocks * 2);
  for (int64_t t0 = 0; t0 < task.n_tokens; t0 += kTokenChunk) {
    const int64_t t_end = std::min(task.n_tokens, t0 + kTokenChunk);
    for (int64_t tile = 0; tile < n_tiles; ++tile) {
      const int64_t r0 = task.row_begin + tile * kRows;
      build_tile(task, r0, groups.data(), d.data());
      int64_t t = t0;
      auto at = [&](int64_t token) { return std::tuple(task.acts + token * n_blocks, sums.data() + token * n_blocks * 2, task.y + token * task.y_stride + r0); };
      for (; t + 4 <= t_end; t += 4) {
        auto [acts, s, y] = at(t);
        tokens_tile<4>(groups.data(), d.data(), n_blocks, acts, s, y, task.y_stride);
      }
      for (; t < t_end; ++t) {
        auto [acts, s, y] = at(t);
        tokens_tile<1>(groups.data(), d.data(), n_blocks, acts, s, y, task.y_stride);
      }
    }
  }
  return task.row_begin + n_tiles * kRows;
}

}  // namespace ridge::cpu
