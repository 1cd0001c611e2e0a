// K quants (Q4_K, Q5_K, Q6_K) against many tokens on 512-bit registers, sixteen weight rows per
// register (one per lane). A tile of sixteen rows is unpacked once per chunk of tokens into VNNI
// operands: for each 32-value group, eight registers whose lane n holds four consecutive values of
// row n (unsigned), and the rows' scales. Each token then costs eight vpdpbusd per group for all
// sixteen rows, against one broadcast dword of its activations each. The arithmetic is
// quant_dot_scalar.cc's, so the results are the same bits as every other kernel's:
//   Q6_K: I = sc_lo * Σ_lo (q - 32)·a + sc_hi * Σ_hi (q - 32)·a (the -32 through the activations'
//         half sums); acc = fma(float(I), d * a.d, acc).
//   Q4_K, Q5_K: I = sc * Σ q·a, M = m * Σ a; acc = fma(float(I), d * a.d, acc),
//         acc_min = fma(-float(M), dmin * a.d, acc_min); the result acc + acc_min.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/k_scales.h"

namespace ridge::cpu {
namespace {

constexpr int64_t kRows = 16;
constexpr int64_t kTokenChunk = 128;  // activations of a chunk stay in L2 while the tiles pass

// One group of a tile: eight chunks of four values for sixteen rows, and the rows' integer
// coefficients (Q6_K: the two half scales; Q4_K/Q5_K: the scale and the minimum).
struct alignas(64) GroupOperands {
  __m512i chunk[8];
  __m512i first, second;
};

// The 32 unsigned values of group g (0..7) of one super-block, in order, and its two coefficients.
void group_values(DType type, const uint8_t* blk, int g, uint8_t* out, int32_t& first, int32_t& second) {
  if (type == DType::Q6_K) {
    const int half = g / 4, k = g % 4;
    const uint8_t* ql = blk + 64 * half + 32 * (k & 1);
    const uint8_t* qh = blk + 128 + 32 * half;
    for (int l = 0; l < 32; ++l) out[l] = uint8_t(((ql[l] >> (k & 2 ? 4 : 0)) & 0x0f) | ((qh[l] >> (2 * k)) & 0x03) << 4);
    const auto* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * half + 2 * k);
    first = sc[0];
    second = sc[1];
    return;
  }
  const bool five = type == DType::Q5_K;
  const uint8_t* qs = blk + (five ? 48 : 16) + 32 * (g / 2);
  for (int l = 0; l < 32; ++l) out[l] = uint8_t(((qs[l] >> (g & 1 ? 4 : 0)) & 0x0f) | (five ? ((blk[16 + l] >> g) & 1) << 4 : 0));
  uint8_t sc, m;
  ref::unpack_scale_min_k4(blk + 4, g, sc, m);
  first = sc;
  second = m;
}

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// The tile of rows [r0, r0 + 16) as operands: (n_groups) groups, (n_super) x 16 scales d and dmin.
void build_tile(const QuantDotTask& task, int64_t r0, GroupOperands* groups, float* d, float* dmin) {
  const int64_t n_super = task.n_blocks / 8, super_bytes = dtype_info(task.type).block_bytes;
  const bool q6 = task.type == DType::Q6_K;
  alignas(64) uint32_t values[kRows][8];
  for (int64_t b = 0; b < n_super; ++b) {
    for (int64_t n = 0; n < kRows; ++n) {
      const uint8_t* blk = task.w + (r0 + n) * task.row_bytes + b * super_bytes;
      d[b * kRows + n] = half_at(blk + (q6 ? 208 : 0));
      dmin[b * kRows + n] = q6 ? 0.0f : half_at(blk + 2);
    }
    for (int g = 0; g < 8; ++g) {
      GroupOperands& op = groups[b * 8 + g];
      alignas(64) int32_t first[kRows], second[kRows];
      for (int64_t n = 0; n < kRows; ++n)
        group_values(task.type, task.w + (r0 + n) * task.row_bytes + b * super_bytes, g,
                     reinterpret_cast<uint8_t*>(values[n]), first[n], second[n]);
      // Chunk c, lane n: values 4c..4c+3 of row n (a 16 x 8 dword transpose).
      for (int c = 0; c < 8; ++c) {
        alignas(64) uint32_t lanes[kRows];
        for (int64_t n = 0; n < kRows; ++n) lanes[n] = values[n][c];
        op.chunk[c] = _mm512_load_si512(lanes);
      }
      op.first = _mm512_load_si512(first);
      op.second = _mm512_load_si512(second);
    }
  }
}

// Σ of each 16-value half of every activation block of a token: Q6_K's -32 offset.
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

// NT tokens against one built tile: the accumulators' lanes are the tile's rows.
template <bool Q6, int NT>
void tokens_tile(const GroupOperands* groups, const float* d, const float* dmin, int64_t n_blocks, const ActBlock* acts,
                 const int32_t* sums, float* y, int64_t y_stride) {
  __m512 acc[NT], acc_min[NT];
  for (int j = 0; j < NT; ++j) acc[j] = acc_min[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const GroupOperands& op = groups[b];
    const __m512 dv = _mm512_loadu_ps(d + (b / 8) * kRows);
    const __m512 dminv = _mm512_loadu_ps(dmin + (b / 8) * kRows);
#pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) {
      const ActBlock& a = acts[j * n_blocks + b];
      const __m512 ad = _mm512_set1_ps(a.d);
      if constexpr (Q6) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        for (int c = 0; c < 4; ++c) lo = _mm512_dpbusd_epi32(lo, op.chunk[c], broadcast_dword(a.q, c));
        for (int c = 4; c < 8; ++c) hi = _mm512_dpbusd_epi32(hi, op.chunk[c], broadcast_dword(a.q, c));
        const int32_t* s = sums + (j * n_blocks + b) * 2;
        lo = _mm512_sub_epi32(lo, _mm512_set1_epi32(32 * s[0]));
        hi = _mm512_sub_epi32(hi, _mm512_set1_epi32(32 * s[1]));
        const __m512i i = _mm512_add_epi32(_mm512_mullo_epi32(lo, op.first), _mm512_mullo_epi32(hi, op.second));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_mul_ps(dv, ad), acc[j]);
      } else {
        __m512i dot = _mm512_setzero_si512();
        for (int c = 0; c < 8; ++c) dot = _mm512_dpbusd_epi32(dot, op.chunk[c], broadcast_dword(a.q, c));
        const __m512i i = _mm512_mullo_epi32(dot, op.first);
        const __m512i m = _mm512_mullo_epi32(op.second, _mm512_set1_epi32(a.sum));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_mul_ps(dv, ad), acc[j]);
        acc_min[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(dminv, ad), acc_min[j]);
      }
    }
  }
  for (int j = 0; j < NT; ++j) _mm512_storeu_ps(y + j * y_stride, Q6 ? acc[j] : _mm512_add_ps(acc[j], acc_min[j]));
}

template <bool Q6>
void run(const QuantDotTask& task, int64_t n_tiles) {
  const int64_t n_blocks = task.n_blocks;
  thread_local std::vector<GroupOperands> groups;
  thread_local std::vector<float> d, dmin;
  thread_local std::vector<int32_t> sums;
  groups.resize(size_t(n_blocks));
  d.resize(size_t(n_blocks / 8 * kRows));
  dmin.resize(d.size());
  if constexpr (Q6) {
    sums.resize(size_t(task.n_tokens * n_blocks * 2));
    for (int64_t t = 0; t < task.n_tokens; ++t) half_sums(task.acts + t * n_blocks, n_blocks, sums.data() + t * n_blocks * 2);
  }
  for (int64_t t0 = 0; t0 < task.n_tokens; t0 += kTokenChunk) {
    const int64_t t_end = std::min(task.n_tokens, t0 + kTokenChunk);
    for (int64_t tile = 0; tile < n_tiles; ++tile) {
      const int64_t r0 = task.row_begin + tile * kRows;
      build_tile(task, r0, groups.data(), d.data(), dmin.data());
      auto at = [&](int64_t t, auto nt) {
        tokens_tile<Q6, decltype(nt)::value>(groups.data(), d.data(), dmin.data(), n_blocks, task.acts + t * n_blocks,
                                             Q6 ? sums.data() + t * n_blocks * 2 : nullptr,
                                             task.y + t * task.y_stride + r0, task.y_stride);
      };
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) at(t, std::integral_constant<int, 4>{});
      for (; t < t_end; ++t) at(t, std::integral_constant<int, 1>{});
    }
  }
}

}  // namespace

int64_t k_dot_tiles_avx512(const QuantDotTask& task) {
  const int64_t n_tiles = (task.row_end - task.row_begin) / kRows;
  if (n_tiles > 0) {
    if (task.type == DType::Q6_K) {
      run<true>(task, n_tiles);
    } else {
      run<false>(task, n_tiles);
    }
  }
  return task.row_begin + n_tiles * kRows;
}

}  // namespace ridge::cpu
