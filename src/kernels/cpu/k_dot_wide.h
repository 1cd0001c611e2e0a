#pragma once
// Body of the wide K-quant kernels (Q4_K, Q5_K, Q6_K and the int8 group types of int8_group.h:
// Q3_K, TQ1_0, the codebook i-quants, against many tokens), one weight row per
// 32-bit lane: included once per ISA translation unit after defining
//   RIDGE_KW_FN  the function to define (k_dot_tiles_avx512, ...)
//   RIDGE_KW_NS  a namespace private to that unit
//   struct Wide  the vector type and operations of that ISA (kLanes rows per register; dot4 adds
//                each lane's four u8 x s8 products to an int32 lane)
// A tile of kLanes rows is unpacked once per chunk of tokens into operands: for each 32-value group,
// eight registers whose lane n holds four consecutive values of row n (unsigned), and the rows'
// scales. Each token then costs eight dot4 per group for all the tile's rows, against one broadcast
// dword of its activations each. The arithmetic is quant_dot_scalar.cc's, so the results are the
// same bits as every other kernel's:
//   Q6_K: I = sc_lo * Σ_lo (q - 32)·a + sc_hi * Σ_hi (q - 32)·a (the -32 through the activations'
//         half sums); acc = fma(float(I), d * a.d, acc).
//   Q4_K, Q5_K: I = sc * Σ q·a, M = m * Σ a; acc = fma(float(I), d * a.d, acc),
//         acc_min = fma(-float(M), dmin * a.d, acc_min); the result acc + acc_min.
//   int8 groups: Q6_K's form with the multipliers m0, m1 and D, the values stored as q + 64 (the
//         64 through the activations' half sums).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/int8_group.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/iq_grids.h"
#include "kernels/ref/k_scales.h"

namespace ridge::cpu {
namespace RIDGE_KW_NS {

#include "kernels/cpu/int8_group_simd.h"

// What the tile's unsigned values u exceed the weights' values by (Q6_K: u = q, the value q - 32;
// int8 groups: u = q + 64); Q4_K and Q5_K have none (their minimum has its own chain).
template <DType T>
constexpr int kValueOffset = T == DType::Q6_K ? 32 : T == DType::IQ4_XS ? 128 : int8_group_type(T) ? 64 : 0;
// The int8 group types whose two halves share one multiplier: I = m * (Σ u·a - 64 Σ a), one product.
template <DType T>
constexpr bool kOneMultiplier = T == DType::IQ4_XS || T == DType::TQ2_0 || T == DType::IQ2_XXS || T == DType::IQ3_XXS || T == DType::IQ3_S || T == DType::IQ1_S || T == DType::TQ1_0;

constexpr int64_t kRows = Wide::kLanes;
constexpr int64_t kTokenChunk = 128;  // activations of a chunk stay in L2 while the tiles pass

// One group of a tile: eight chunks of four values for each of the tile's rows, and the rows' integer
// coefficients (Q6_K: the two half scales; Q4_K/Q5_K: the scale and the minimum).
struct alignas(64) GroupOperands {
  Wide::I chunk[8];
  Wide::I first, second;
};

// The 32 unsigned values of group g (0..7) of one super-block, in order, as one 256-bit vector, and
// its two coefficients. 16-bit shifts are safe here: each byte's wanted bits are masked after them.
inline __m256i shift_right16(__m256i v, int n) { return _mm256_srl_epi16(v, _mm_cvtsi32_si128(n)); }
inline __m256i bytes(int v) { return _mm256_set1_epi8(char(v)); }
template <DType T>
inline __m256i group_values(const uint8_t* blk, int g, int32_t& first, int32_t& second) {
  auto load = [](const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  if constexpr (int8_group_type(T)) {
    const CodeGroup c = code_group<T>(blk, g);
    first = c.m0;
    second = c.m1;
    return _mm256_add_epi8(c.q, bytes(kValueOffset<T>));
  } else if constexpr (T == DType::Q6_K) {
    const int half = g / 4, k = g % 4;
    const __m256i lo = _mm256_and_si256(shift_right16(load(blk + 64 * half + 32 * (k & 1)), k & 2 ? 4 : 0), bytes(0x0f));
    const __m256i hi = _mm256_and_si256(shift_right16(load(blk + 128 + 32 * half), 2 * k), bytes(0x03));
    const auto* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * half + 2 * k);
    first = sc[0];
    second = sc[1];
    return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
  }
  constexpr bool five = T == DType::Q5_K;
  __m256i v = _mm256_and_si256(shift_right16(load(blk + (five ? 48 : 16) + 32 * (g / 2)), g & 1 ? 4 : 0), bytes(0x0f));
  if constexpr (five) v = _mm256_or_si256(v, _mm256_slli_epi16(_mm256_and_si256(shift_right16(load(blk + 16), g), bytes(0x01)), 4));
  uint8_t sc, m;
  ref::unpack_scale_min_k4(blk + 4, g, sc, m);
  first = sc;
  second = m;
  return v;
}

inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// The tile of rows [r0, r0 + kRows) as operands: (n_groups) groups, (n_super) x kRows scales d and dmin.
template <DType T>
void build_tile(const QuantDotTask& task, int64_t r0, GroupOperands* groups, float* d, float* dmin) {
  const int64_t n_super = task.n_blocks / 8, super_bytes = dtype_info(T).block_bytes;
  constexpr bool q6 = T == DType::Q6_K;
  alignas(64) uint32_t values[kRows][8];
  alignas(64) int32_t first[kRows], second[kRows];
  for (int64_t b = 0; b < n_super; ++b) {
    for (int64_t n = 0; n < kRows; ++n) {
      const uint8_t* blk = task.w + (r0 + n) * task.row_bytes + b * super_bytes;
      if constexpr (int8_group_type(T)) {
        d[b * kRows + n] = code_scale<T>(blk);
        dmin[b * kRows + n] = 0.0f;
      } else {
        d[b * kRows + n] = half_at(blk + (q6 ? 208 : 0));
        dmin[b * kRows + n] = q6 ? 0.0f : half_at(blk + 2);
      }
    }
    for (int g = 0; g < 8; ++g) {
      GroupOperands& op = groups[b * 8 + g];
      for (int64_t n = 0; n < kRows; ++n)
        _mm256_store_si256(reinterpret_cast<__m256i*>(values[n]),
                           group_values<T>(task.w + (r0 + n) * task.row_bytes + b * super_bytes, g, first[n], second[n]));
      // Chunk c, lane n: values 4c..4c+3 of row n (a kRows x 8 dword transpose, one gather per chunk).
      for (int c = 0; c < 8; ++c) op.chunk[c] = Wide::gather_column(&values[0][c]);
      op.first = Wide::load(first);
      op.second = Wide::load(second);
    }
  }
}

// Σ of each 16-value half of every activation block of a token: the offsets of Q6_K and the int8 groups.
void half_sums(const ActBlock* acts, int64_t n_blocks, int32_t* out) {
  for (int64_t b = 0; b < n_blocks; ++b) cpu::half_sums(acts[b], out[2 * b], out[2 * b + 1]);
}

inline Wide::I broadcast_dword(const int8_t* q, int c) {
  int32_t v;
  std::memcpy(&v, q + 4 * c, 4);
  return Wide::set1(v);
}

// NT tokens against one built tile: the accumulators' lanes are the tile's rows. kOffset != 0: the
// form of Q6_K and the int8 groups, each half's Σ u·a less kOffset times the activations' half sum.
template <int kOffset, bool kOne, int NT>
void tokens_tile(const GroupOperands* groups, const float* d, const float* dmin, int64_t n_blocks, const ActBlock* acts,
                 const int32_t* sums, float* y, int64_t y_stride) {
  using W = Wide;
  typename W::F acc[NT], acc_min[NT];
  for (int j = 0; j < NT; ++j) acc[j] = acc_min[j] = W::zerof();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const GroupOperands& op = groups[b];
    const typename W::F dv = W::loadf(d + (b / 8) * kRows);
    const typename W::F dminv = W::loadf(dmin + (b / 8) * kRows);
#pragma GCC unroll 4
    for (int j = 0; j < NT; ++j) {
      const ActBlock& a = acts[j * n_blocks + b];
      const typename W::F ad = W::set1f(a.d);
      if constexpr (kOffset != 0) {
        typename W::I lo = W::zero(), hi = W::zero();
        for (int c = 0; c < 4; ++c) lo = W::dot4(lo, op.chunk[c], broadcast_dword(a.q, c));
        for (int c = 4; c < 8; ++c) hi = W::dot4(hi, op.chunk[c], broadcast_dword(a.q, c));
        typename W::I i;
        if constexpr (kOne) {  // the same integer as the two products: one multiplier
          i = W::mullo(W::sub(W::add(lo, hi), W::set1(kOffset * a.sum)), op.first);
        } else {
          const int32_t* s = sums + (j * n_blocks + b) * 2;
          lo = W::sub(lo, W::set1(kOffset * s[0]));
          hi = W::sub(hi, W::set1(kOffset * s[1]));
          i = W::add(W::mullo(lo, op.first), W::mullo(hi, op.second));
        }
        acc[j] = W::fmadd(W::cvt(i), W::mulf(dv, ad), acc[j]);
      } else {
        typename W::I dot = W::zero();
        for (int c = 0; c < 8; ++c) dot = W::dot4(dot, op.chunk[c], broadcast_dword(a.q, c));
        const typename W::I i = W::mullo(dot, op.first);
        const typename W::I m = W::mullo(op.second, W::set1(a.sum));
        acc[j] = W::fmadd(W::cvt(i), W::mulf(dv, ad), acc[j]);
        acc_min[j] = W::fnmadd(W::cvt(m), W::mulf(dminv, ad), acc_min[j]);
      }
    }
  }
  for (int j = 0; j < NT; ++j) W::storef(y + j * y_stride, kOffset != 0 ? acc[j] : W::addf(acc[j], acc_min[j]));
}

template <DType T>
void run(const QuantDotTask& task, int64_t n_tiles) {
  constexpr int kOffset = kValueOffset<T>;
  constexpr bool Q6 = kOffset != 0 && !kOneMultiplier<T>;  // needs the activations' half sums
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
      build_tile<T>(task, r0, groups.data(), d.data(), dmin.data());
      auto at = [&](int64_t t, auto nt) {
        tokens_tile<kOffset, kOneMultiplier<T>, decltype(nt)::value>(groups.data(), d.data(), dmin.data(), n_blocks, task.acts + t * n_blocks,
                                             Q6 ? sums.data() + t * n_blocks * 2 : nullptr,
                                             task.y + t * task.y_stride + r0, task.y_stride);
      };
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) at(t, std::integral_constant<int, 4>{});
      for (; t < t_end; ++t) at(t, std::integral_constant<int, 1>{});
    }
  }
}

}  // namespace RIDGE_KW_NS

int64_t RIDGE_KW_FN(const QuantDotTask& task) {
  using namespace RIDGE_KW_NS;
  const int64_t n_tiles = (task.row_end - task.row_begin) / kRows;
  if (n_tiles > 0) {
    switch (task.type) {
      case DType::Q6_K: run<DType::Q6_K>(task, n_tiles); break;
      case DType::Q5_K: run<DType::Q5_K>(task, n_tiles); break;
      case DType::Q4_K: run<DType::Q4_K>(task, n_tiles); break;
      case DType::Q3_K: run<DType::Q3_K>(task, n_tiles); break;
      case DType::TQ1_0: run<DType::TQ1_0>(task, n_tiles); break;
      case DType::IQ2_XXS: run<DType::IQ2_XXS>(task, n_tiles); break;
      case DType::IQ2_XS: run<DType::IQ2_XS>(task, n_tiles); break;
      case DType::IQ2_S: run<DType::IQ2_S>(task, n_tiles); break;
      case DType::IQ3_XXS: run<DType::IQ3_XXS>(task, n_tiles); break;
      case DType::IQ3_S: run<DType::IQ3_S>(task, n_tiles); break;
      case DType::IQ1_S: run<DType::IQ1_S>(task, n_tiles); break;
      case DType::IQ1_M: run<DType::IQ1_M>(task, n_tiles); break;
      case DType::TQ2_0: run<DType::TQ2_0>(task, n_tiles); break;
      case DType::IQ4_XS:  // its values reach 241 once offset: past what a vpmaddubsw pair holds
        if constexpr (!Wide::kFullBytes) return task.row_begin;
        run<DType::IQ4_XS>(task, n_tiles);
        break;
      default: return task.row_begin;
    }
  }
  return task.row_begin + n_tiles * kRows;
}

}  // namespace ridge::cpu
