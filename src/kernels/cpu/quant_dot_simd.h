#pragma once
// Body of the 256-bit integer dot kernels, included once per ISA translation unit with
//   RIDGE_QDOT_FN   the function to define (quant_dot_avx2, ...)
//   RIDGE_QDOT_NS   a namespace private to that unit (inline helpers compiled with different flags
//                   must not be merged by the linker)
//   RIDGE_QDOT_VNNI 1 to use vpdpbusd (AVX-VNNI or AVX-512 VNNI/VL), 0 for vpmaddubsw + vpmaddwd
// One weight block is unpacked once and dotted with up to 4 tokens (a 1 x 4 register tile);
// per-block scales are applied in f32, Q4_1's minimum through the activations' block sums.
// The per-lane integer sums and the f32 accumulation order are llama.cpp's, so equal inputs give
// bit-identical outputs.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/cpu/int8_group.h"
#include "kernels/cpu/matmul_kernels.h"
#include "kernels/ref/fp4.h"
#include "kernels/ref/iq_grids.h"
#include "kernels/ref/k_scales.h"

namespace ridge::cpu {
namespace RIDGE_QDOT_NS {

inline float load_f16(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// 16 bytes of nibbles -> 32 unsigned bytes in element order (low nibbles first).
inline __m256i unpack_nibbles(const uint8_t* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), mask), _mm_and_si128(x, mask));
}

// Σ u[i] * s[i] as 8 int32 lanes; u unsigned bytes (< 128 on the maddubs path, so no saturation), s signed.
inline __m256i dot_u8_s8(__m256i u, __m256i s) {
#if RIDGE_QDOT_VNNI
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#endif
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

inline float hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// One weight block made ready for the integer dot: its quants (unsigned for Q4_1, signed
// otherwise), its scale, and the coefficient of the activation block sum.
struct WeightBlock {
  __m256i q;
  float d;
  float offset_min;  // multiplies act.s (Q4_1's minimum, as llama.cpp applies it)
  __m256 lane_d;     // NVFP4: the scale of each lane's values (lanes 0-3: the first 16, 4-7: the next)
};

// MXFP4 / NVFP4 codes (nibbles 0..15) to their signed integer values (kernels/ref/fp4.h).
inline __m256i fp4_values(__m256i codes) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ref::kFp4Values)));
  return _mm256_shuffle_epi8(table, codes);
}

// IQ4_NL / IQ4_XS codes (nibbles 0..15) to their non-uniform levels (-127..113, ref::kIq4nlValues).
inline __m256i iq4_values(__m256i codes) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ref::kIq4nlValues.data())));
  return _mm256_shuffle_epi8(table, codes);
}

// Unsigned E4M3 bytes to half their value (ref::ue4m3_half), by table.
struct Ue4m3Table {
  float half[256];
  Ue4m3Table() {
    for (int i = 0; i < 256; ++i) half[i] = ref::ue4m3_half(uint8_t(i));
  }
};
inline const Ue4m3Table kUe4m3;

#include "kernels/cpu/int8_group_simd.h"

// Activation block b (32 values) of a row of MXFP4 or NVFP4 blocks, or of the 32-value types.
template <DType T>
inline WeightBlock load_block_at(const uint8_t* row, int64_t b, int64_t block_bytes);

template <DType T>
inline WeightBlock load_block(const uint8_t* p) {
  if constexpr (T == DType::Q4_0) {
    // Signed q - 8, dotted with the sign trick: the same exact int32 lanes as llama.cpp.
    return {_mm256_sub_epi8(unpack_nibbles(p + 2), _mm256_set1_epi8(8)), load_f16(p), 0.0f, _mm256_setzero_ps()};
  } else if constexpr (T == DType::Q4_1) {
    return {unpack_nibbles(p + 4), load_f16(p), load_f16(p + 2), _mm256_setzero_ps()};
  } else {  // Q8_0
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)), load_f16(p), 0.0f, _mm256_setzero_ps()};
  }
}

template <DType T>
inline WeightBlock load_block_at(const uint8_t* row, int64_t b, int64_t block_bytes) {
  if constexpr (T == DType::MXFP4) {
    const uint8_t* p = row + b * 17;
    return {fp4_values(unpack_nibbles(p + 1)), ref::e8m0_half(p[0]), 0.0f, _mm256_setzero_ps()};
  } else if constexpr (T == DType::NVFP4) {
    // Two 16-value groups of a 64-value block: nibbles low then high within each group's 8 bytes.
    const uint8_t* p = row + (b >> 1) * 36;
    const int h = int(b & 1);
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4 + 16 * h));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(x, mask), hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
    const __m256i codes = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
    const float d0 = kUe4m3.half[p[2 * h]], d1 = kUe4m3.half[p[2 * h + 1]];
    return {fp4_values(codes), 0.0f, 0.0f, _mm256_set_ps(d1, d1, d1, d1, d0, d0, d0, d0)};
  } else if constexpr (T == DType::IQ4_NL) {
    const uint8_t* p = row + b * 18;
    return {iq4_values(unpack_nibbles(p + 2)), load_f16(p), 0.0f, _mm256_setzero_ps()};
  } else {
    return load_block<T>(row + b * block_bytes);
  }
}

// Σ w·a per group of 4 bytes as 8 int32 lanes. Signed weights (Q4_0, Q8_0) go through the sign
// trick (|w| · sign(a, w)), which is exact on both paths: |w| <= 128, so maddubs pairs stay < 2^15.
template <DType T>
inline __m256i block_dot(const WeightBlock& wb, const ActBlock& a) {
  const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
  if constexpr (T == DType::Q4_1) {
    return dot_u8_s8(wb.q, q);
  } else {
    return dot_u8_s8(_mm256_sign_epi8(wb.q, wb.q), _mm256_sign_epi8(q, wb.q));
  }
}

// Decode streams each row once: ask for every cache line of a super-block ~2 KiB ahead.
template <int NT>
inline void prefetch_ahead(const uint8_t* blk, int64_t bytes) {
  if constexpr (NT == 1)
    for (int64_t line = 0; line < bytes; line += 64) _mm_prefetch(reinterpret_cast<const char*>(blk) + 2048 + line, _MM_HINT_T0);
}

// An NR x NT register tile: NR weight rows against NT tokens. Every (row, token) pair keeps its own
// accumulators, so the tile has NR * NT independent FMA chains to hide their latency; each weight
// block is unpacked once for NT tokens.
template <DType T, int NR, int NT>
inline void dot_tile(const uint8_t* rows, int64_t row_bytes, int64_t n_blocks, const ActBlock* acts, int64_t act_stride,
                     int64_t block_bytes, float* out /* (NT, NR) */) {
  __m256 acc[NR][NT];
  float offset_sum[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) {
      acc[r][t] = _mm256_setzero_ps();
      offset_sum[r][t] = 0.0f;
    }
  for (int64_t b = 0; b < n_blocks; ++b) {
    WeightBlock wb[NR];
    for (int r = 0; r < NR; ++r) {
      // Decode streams each row once: ask for its bytes 2 KiB ahead (a block is at most 34 bytes,
      // so every cache line is asked for).
      if constexpr (NT == 1) _mm_prefetch(reinterpret_cast<const char*>(rows + r * row_bytes + b * block_bytes) + 2048, _MM_HINT_T0);
      wb[r] = load_block_at<T>(rows + r * row_bytes, b, block_bytes);
    }
    for (int t = 0; t < NT; ++t) {
      const ActBlock& a = acts[t * act_stride + b];
      for (int r = 0; r < NR; ++r) {
        const __m256 sums = _mm256_cvtepi32_ps(block_dot<T>(wb[r], a));
        if constexpr (T == DType::NVFP4)
          acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(wb[r].lane_d, _mm256_set1_ps(a.d)), sums, acc[r][t]);
        else
          acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(wb[r].d * a.d), sums, acc[r][t]);
        if constexpr (T == DType::Q4_1) offset_sum[r][t] += wb[r].offset_min * a.s;
      }
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r) out[t * NR + r] = hsum(acc[r][t]) + offset_sum[r][t];
}

template <DType T, int NR, int NT>
inline void run_tile(const QuantDotTask& task, int64_t r, int64_t t, int64_t block_bytes) {
  float out[NR * NT];
  dot_tile<T, NR, NT>(task.w + r * task.row_bytes, task.row_bytes, task.n_blocks, task.acts + t * task.n_blocks,
                      task.n_blocks, block_bytes, out);
  for (int i = 0; i < NT; ++i)
    for (int j = 0; j < NR; ++j) task.y[(t + i) * task.y_stride + r + j] = out[i * NR + j];
}

// K quants: 256-value super-blocks of eight 32-value groups, each group unpacked once into int8
// weights and its integer scales, then dotted with up to NT tokens (a tile of NR rows x NT tokens).
// For one (row, token) the arithmetic is a fixed chain whatever the tile, so a token's result is the
// same bits alone as in a batch.
// A Q6_K group: its weights and its two half scales.
struct KGroup {
  __m256i w;      // q - 32 (signed)
  __m256i scale;  // lanes 0-3 and 4-7 carry the two 16-value halves' scales
};

// Q6_K (ql: 128 bytes of low nibbles, qh: 64 bytes of 2-bit highs, 16 int8 scales, f16 d). Group g
// of half h: low nibbles of ql[64h + 32(g & 1)..] (high nibbles when g & 2), bits 2g of qh[32h..].
inline KGroup q6k_group(const uint8_t* blk, int group) {
  const int half = group / 4, g = group % 4;
  const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * half + 32 * (g & 1)));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * half));
  const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(0x03);
  const __m256i low = _mm256_and_si256(g & 2 ? _mm256_srli_epi16(l, 4) : l, low4);
  const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2 * g), low2), 4);
  const auto* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * half + 2 * g);
  return {_mm256_sub_epi8(_mm256_or_si256(low, high), _mm256_set1_epi8(32)),
          _mm256_set_m128i(_mm_set1_epi32(sc[1]), _mm_set1_epi32(sc[0]))};
}

// Q4_K (f16 d and dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles: each 32 bytes hold
// two groups, low nibbles first), and Q5_K, which adds a fifth bit per value.
struct Q4kHeader {
  float d, dmin;
  int32_t scale[8], min[8];
};

inline Q4kHeader q4k_header(const uint8_t* blk) {
  Q4kHeader h{load_f16(blk), load_f16(blk + 2), {}, {}};
  for (int g = 0; g < 8; ++g) {
    uint8_t sc, m;
    ref::unpack_scale_min_k4(blk + 4, g, sc, m);
    h.scale[g] = sc;
    h.min[g] = m;
  }
  return h;
}

// Group g's 32 unsigned values.
inline __m256i q4k_group(const uint8_t* blk, int g) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * (g / 2)));
  return _mm256_and_si256(g & 1 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0f));
}

// Q5_K (176 bytes): Q4_K's header, then qh[32] (bit g of qh[l] is value l's fifth bit in group g),
// then Q4_K's 128 bytes of nibbles. Values 0..31, unsigned.
inline __m256i q5k_group(const uint8_t* blk, int g) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 48 + 32 * (g / 2)));
  const __m256i low = _mm256_and_si256(g & 1 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0f));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16));
  // Shifting 16-bit lanes by g < 8 brings bit g of each byte to that byte's bit 0.
  const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, g), _mm256_set1_epi8(1)), 4);
  return _mm256_or_si256(low, high);
}

// Lane g of the result: the sum of v[g]'s eight lanes (a tree of horizontal adds).
inline __m256i sum_each(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}


// A super-block's eight exact group integers (lane g) fused into one row's f32 chain in group
// order, acc = fma(float(I_g), d * a[g].d, acc): the last step of every group-form kernel.
inline float fuse_groups(__m256i ints, float d, const ActBlock* a, float acc) {
  alignas(32) float exact[8];  // float of an integer below 2^24: exact
  _mm256_store_ps(exact, _mm256_cvtepi32_ps(ints));
  for (int g = 0; g < 8; ++g) acc = std::fma(exact[g], d * a[g].d, acc);
  return acc;
}

// Q4_K / Q5_K in the arithmetic of quant_dot_scalar.cc: per group the exact integers sc * Σ q·a and
// m * Σ a, fused into each (row, token)'s two f32 chains. The eight groups' dot lanes are reduced together.
template <DType T, int NR, int NT>
inline void q4k_tile(const QuantDotTask& task, int64_t r, int64_t t) {
  constexpr int64_t kSuperBytes = T == DType::Q5_K ? 176 : 144;
  float acc[NR][NT] = {}, acc_min[NR][NT] = {};  // the scales' chain and the minimums' chain
  for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
    const uint8_t* blk[NR];
    Q4kHeader h[NR];
    for (int i = 0; i < NR; ++i) {
      blk[i] = task.w + (r + i) * task.row_bytes + b * kSuperBytes;
      prefetch_ahead<NT>(blk[i], kSuperBytes);
      h[i] = q4k_header(blk[i]);
    }
    __m256i group_dots[NR][NT][8];  // per group: lanes of Σ q·a
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      __m256i w[NR];
      for (int i = 0; i < NR; ++i) w[i] = T == DType::Q5_K ? q5k_group(blk[i], g) : q4k_group(blk[i], g);
      for (int j = 0; j < NT; ++j) {
        const ActBlock& a = task.acts[(t + j) * task.n_blocks + b * 8 + g];
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
        for (int i = 0; i < NR; ++i) group_dots[i][j][g] = dot_u8_s8(w[i], q);
      }
    }
    for (int j = 0; j < NT; ++j) {
      const ActBlock* a = task.acts + (t + j) * task.n_blocks + b * 8;
      alignas(32) int32_t act_sums[8];
      for (int g = 0; g < 8; ++g) act_sums[g] = a[g].sum;
      const __m256i sums = _mm256_load_si256(reinterpret_cast<const __m256i*>(act_sums));
      for (int i = 0; i < NR; ++i) {
        const __m256i scales = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h[i].scale));
        const __m256i mins = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h[i].min));
        alignas(32) float scaled[8], offsets[8];  // floats of integers below 2^24: exact
        _mm256_store_ps(scaled, _mm256_cvtepi32_ps(_mm256_mullo_epi32(sum_each(group_dots[i][j]), scales)));
        _mm256_store_ps(offsets, _mm256_cvtepi32_ps(_mm256_mullo_epi32(mins, sums)));
        for (int g = 0; g < 8; ++g) {
          acc[i][j] = std::fma(scaled[g], h[i].d * a[g].d, acc[i][j]);
          acc_min[i][j] = std::fma(-offsets[g], h[i].dmin * a[g].d, acc_min[i][j]);
        }
      }
    }
  }
  for (int j = 0; j < NT; ++j)
    for (int i = 0; i < NR; ++i) task.y[(t + j) * task.y_stride + r + i] = acc[i][j] + acc_min[i][j];
}

// Q6_K in the arithmetic of quant_dot_scalar.cc: per group an exact integer (its two halves' sums
// times their scales), fused into each (row, token)'s f32 chain. The eight groups of a super-block
// are reduced to their integers together (a tree of horizontal adds), then fused in group order.
template <int NR, int NT>
inline void q6k_tile(const QuantDotTask& task, int64_t r, int64_t t) {
  constexpr int64_t kSuperBytes = 210;
  float acc[NR][NT] = {};
  for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
    const uint8_t* blk[NR];
    float d[NR];
    for (int i = 0; i < NR; ++i) {
      blk[i] = task.w + (r + i) * task.row_bytes + b * kSuperBytes;
      prefetch_ahead<NT>(blk[i], kSuperBytes);
      d[i] = load_f16(blk[i] + 208);
    }
    __m256i group_sums[NR][NT][8];  // per group: lanes of Σ w·a times the halves' scales
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      KGroup k[NR];
      for (int i = 0; i < NR; ++i) k[i] = q6k_group(blk[i], g);
      for (int j = 0; j < NT; ++j) {
        const ActBlock& a = task.acts[(t + j) * task.n_blocks + b * 8 + g];
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
        for (int i = 0; i < NR; ++i)
          group_sums[i][j][g] = _mm256_mullo_epi32(dot_u8_s8(_mm256_sign_epi8(k[i].w, k[i].w), _mm256_sign_epi8(q, k[i].w)),
                                                   k[i].scale);
      }
    }
    for (int j = 0; j < NT; ++j) {
      const ActBlock* a = task.acts + (t + j) * task.n_blocks + b * 8;
      for (int i = 0; i < NR; ++i) acc[i][j] = fuse_groups(sum_each(group_sums[i][j]), d[i], a, acc[i][j]);
    }
  }
  for (int j = 0; j < NT; ++j)
    for (int i = 0; i < NR; ++i) task.y[(t + j) * task.y_stride + r + i] = acc[i][j];
}

// Q2_K in the arithmetic of quant_dot_scalar.cc: per group the exact integers I = sc_lo Σ_lo q·a +
// sc_hi Σ_hi q·a (8 groups reduced together) and M = m_lo Σ_lo a + m_hi Σ_hi a, fused into each
// (row, token)'s two f32 chains in group order.
inline int32_t low_half_sum(const ActBlock& a) {  // Σ of the block's first 16 quants
  const __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.q)), _mm_set1_epi8(char(0x80)));
  const __m128i s = _mm_sad_epu8(x, _mm_setzero_si128());
  return _mm_cvtsi128_si32(s) + _mm_extract_epi32(s, 2) - 16 * 128;
}

template <int NR, int NT>
inline void q2k_tile(const QuantDotTask& task, int64_t r, int64_t t) {
  constexpr int64_t kSuperBytes = 84;
  float acc[NR][NT] = {}, acc_min[NR][NT] = {};
  for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
    const uint8_t* blk[NR];
    float d[NR], dmin[NR];
    for (int i = 0; i < NR; ++i) {
      blk[i] = task.w + (r + i) * task.row_bytes + b * kSuperBytes;
      prefetch_ahead<NT>(blk[i], kSuperBytes);
      d[i] = load_f16(blk[i] + 80);
      dmin[i] = load_f16(blk[i] + 82);
    }
    __m256i group_sums[NR][NT][8];  // per group: lanes of Σ q·a times their half's scale
    int32_t mins[NR][NT][8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      int32_t lo[NT];
      for (int j = 0; j < NT; ++j) lo[j] = low_half_sum(task.acts[(t + j) * task.n_blocks + b * 8 + g]);
      for (int i = 0; i < NR; ++i) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[i] + 16 + 32 * (g / 4)));
        const __m256i v = _mm256_and_si256(_mm256_srli_epi16(raw, 2 * (g % 4)), _mm256_set1_epi8(3));
        const int s0 = blk[i][2 * g], s1 = blk[i][2 * g + 1];
        const __m256i mult = _mm256_set_m128i(_mm_set1_epi32(s1 & 15), _mm_set1_epi32(s0 & 15));
        for (int j = 0; j < NT; ++j) {
          const ActBlock& a = task.acts[(t + j) * task.n_blocks + b * 8 + g];
          const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
          group_sums[i][j][g] = _mm256_mullo_epi32(dot_u8_s8(v, q), mult);
          mins[i][j][g] = (s0 >> 4) * lo[j] + (s1 >> 4) * (a.sum - lo[j]);
        }
      }
    }
    for (int j = 0; j < NT; ++j) {
      const ActBlock* a = task.acts + (t + j) * task.n_blocks + b * 8;
      for (int i = 0; i < NR; ++i) {
        acc[i][j] = fuse_groups(sum_each(group_sums[i][j]), d[i], a, acc[i][j]);
        for (int g = 0; g < 8; ++g) acc_min[i][j] = std::fma(-float(mins[i][j][g]), dmin[i] * a[g].d, acc_min[i][j]);
      }
    }
  }
  for (int j = 0; j < NT; ++j)
    for (int i = 0; i < NR; ++i) task.y[(t + j) * task.y_stride + r + i] = acc[i][j] + acc_min[i][j];
}

// The tiles a task is cut into. Decode: weights stream from memory once, kDecodeRows rows per
// token at a time (more chains in flight, or, for the K quants' long per-row chains, one row).
// Many tokens: two rows against four tokens share each unpacked block, a chunk of tokens at a time
// so their activations stay in L2 while the rows stream by. Tiles::tile<NR, NT>(task, r, t).
template <class Tiles>
void run_tiled(const QuantDotTask& task) {
  constexpr int kDecodeRows = Tiles::kDecodeRows;
  if (task.n_tokens == 1) {
    int64_t r = task.row_begin;
    for (; r + kDecodeRows <= task.row_end; r += kDecodeRows) Tiles::template tile<kDecodeRows, 1>(task, r, 0);
    for (; r < task.row_end; ++r) Tiles::template tile<1, 1>(task, r, 0);
    return;
  }
  // Two or three tokens (a decode with its speculative drafts): each row's blocks unpacked once for
  // all of them, so the weights stream from memory once, not once per token.
  if (task.n_tokens < 4) {
    int64_t r = task.row_begin;
    for (; r + 2 <= task.row_end; r += 2) {
      if (task.n_tokens == 2) Tiles::template tile<2, 2>(task, r, 0);
      else Tiles::template tile<2, 3>(task, r, 0);
    }
    for (; r < task.row_end; ++r) {
      if (task.n_tokens == 2) Tiles::template tile<1, 2>(task, r, 0);
      else Tiles::template tile<1, 3>(task, r, 0);
    }
    return;
  }
  constexpr int64_t kTokenChunk = 64;
  for (int64_t t0 = 0; t0 < task.n_tokens; t0 += kTokenChunk) {
    const int64_t t_end = std::min(task.n_tokens, t0 + kTokenChunk);
    int64_t r = task.row_begin;
    for (; r + 2 <= task.row_end; r += 2) {
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) Tiles::template tile<2, 4>(task, r, t);
      for (; t < t_end; ++t) Tiles::template tile<2, 1>(task, r, t);
    }
    for (; r < task.row_end; ++r) {
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) Tiles::template tile<1, 4>(task, r, t);
      for (; t < t_end; ++t) Tiles::template tile<1, 1>(task, r, t);
    }
  }
}

template <DType T>
struct BlockTiles {
  static constexpr int kDecodeRows = 4;
  // Bytes per 32 values (NVFP4's 64-value blocks: 18 on average, for the prefetch distance).
  static constexpr int64_t kBytes32 = T == DType::NVFP4 ? 18 : T == DType::MXFP4 ? 17
                                     : T == DType::Q8_0 ? 34 : T == DType::Q4_1 ? 20 : 18;
  template <int NR, int NT>
  static void tile(const QuantDotTask& task, int64_t r, int64_t t) {
    run_tile<T, NR, NT>(task, r, t, kBytes32);
  }
};

#include "kernels/cpu/code_tiles_simd.h"

struct Q2kTiles {
  static constexpr int kDecodeRows = 2;
  template <int NR, int NT>
  static void tile(const QuantDotTask& task, int64_t r, int64_t t) {
    q2k_tile<NR, NT>(task, r, t);
  }
};

struct Q6Tiles {
  static constexpr int kDecodeRows = 1;
  template <int NR, int NT>
  static void tile(const QuantDotTask& task, int64_t r, int64_t t) {
    q6k_tile<NR, NT>(task, r, t);
  }
};

template <DType T>  // Q4_K or Q5_K
struct Q4kTiles {
  static constexpr int kDecodeRows = 1;
  template <int NR, int NT>
  static void tile(const QuantDotTask& task, int64_t r, int64_t t) {
    q4k_tile<T, NR, NT>(task, r, t);
  }
};

}  // namespace RIDGE_QDOT_NS

void RIDGE_QDOT_FN(const QuantDotTask& task) {
  switch (task.type) {
    case DType::Q4_0: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::Q4_0>>(task);
    case DType::Q4_1: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::Q4_1>>(task);
    case DType::Q8_0: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::Q8_0>>(task);
    case DType::MXFP4: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::MXFP4>>(task);
    case DType::NVFP4: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::NVFP4>>(task);
    case DType::IQ4_NL: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::BlockTiles<DType::IQ4_NL>>(task);
    case DType::IQ4_XS: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ4_XS>>(task);
    case DType::TQ2_0: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::TQ2_0>>(task);
    case DType::Q3_K: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::Q3_K>>(task);
    case DType::TQ1_0: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::TQ1_0>>(task);
    case DType::IQ2_XXS: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ2_XXS>>(task);
    case DType::IQ2_XS: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ2_XS>>(task);
    case DType::IQ2_S: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ2_S>>(task);
    case DType::IQ3_XXS: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ3_XXS>>(task);
    case DType::IQ3_S: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ3_S>>(task);
    case DType::IQ1_S: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ1_S>>(task);
    case DType::IQ1_M: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::CodeTiles<DType::IQ1_M>>(task);
    case DType::Q2_K: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::Q2kTiles>(task);
    case DType::Q4_K: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::Q4kTiles<DType::Q4_K>>(task);
    case DType::Q5_K: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::Q4kTiles<DType::Q5_K>>(task);
    case DType::Q6_K: return RIDGE_QDOT_NS::run_tiled<RIDGE_QDOT_NS::Q6Tiles>(task);
    default: break;
  }
}

}  // namespace ridge::cpu
