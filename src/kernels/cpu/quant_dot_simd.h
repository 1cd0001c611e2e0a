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

#include "kernels/cpu/matmul_kernels.h"
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
};

template <DType T>
inline WeightBlock load_block(const uint8_t* p) {
  if constexpr (T == DType::Q4_0) {
    // Signed q - 8, dotted with the sign trick: the same exact int32 lanes as llama.cpp.
    return {_mm256_sub_epi8(unpack_nibbles(p + 2), _mm256_set1_epi8(8)), load_f16(p), 0.0f};
  } else if constexpr (T == DType::Q4_1) {
    return {unpack_nibbles(p + 4), load_f16(p), load_f16(p + 2)};
  } else {  // Q8_0
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)), load_f16(p), 0.0f};
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
    for (int r = 0; r < NR; ++r) wb[r] = load_block<T>(rows + r * row_bytes + b * block_bytes);
    for (int t = 0; t < NT; ++t) {
      const ActBlock& a = acts[t * act_stride + b];
      for (int r = 0; r < NR; ++r) {
        const __m256 sums = _mm256_cvtepi32_ps(block_dot<T>(wb[r], a));
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

// Q6_K: 256-element super-blocks (ql: 128 low nibbles, qh: 64 bytes of 2-bit highs, 16 int8 scales,
// f16 d); value = d * scale[16-group] * (q - 32). Each half (128 values) unpacks into four 32-value
// groups, one activation block each; the two 16-value halves of a group carry their own scale,
// which multiplies its four int32 lanes.
inline float q6k_dot_superblock(const uint8_t* blk, const ActBlock* acts) {
  const uint8_t* ql = blk;
  const uint8_t* qh = blk + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192);
  const float d = load_f16(blk + 208);
  const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(0x03), bias = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8) {
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
    const __m256i groups[4] = {
        _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(h, low2), 4)),
        _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), low2), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), low2), 4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), low2), 4)),
    };
    for (int g = 0; g < 4; ++g) {
      const ActBlock& a = acts[half * 4 + g];
      const __m256i w = _mm256_sub_epi8(groups[g], bias);
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
      const __m256i lanes = dot_u8_s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(q, w));
      const __m256i scales = _mm256_set_m128i(_mm_set1_epi32(sc[2 * g + 1]), _mm_set1_epi32(sc[2 * g]));
      acc = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(_mm256_mullo_epi32(lanes, scales)), acc);
    }
  }
  return hsum(acc);
}

// Q4_K: 256-element super-blocks (f16 d and dmin, 6-bit scale and min per 32 values, 128 bytes of
// nibbles: each 32 bytes hold two sub-blocks, low nibbles first); value = d * scale * q - dmin * min.
// Each sub-block is one activation block: its int32 lanes times its scale, and its min through the
// activation block's exact sum.
inline float q4k_dot_superblock(const uint8_t* blk, const ActBlock* acts) {
  const float d = load_f16(blk), dmin = load_f16(blk + 2);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0f;
  for (int j = 0; j < 4; ++j) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * j));
    const __m256i halves[2] = {_mm256_and_si256(raw, low4), _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4)};
    for (int h = 0; h < 2; ++h) {
      const int s = 2 * j + h;
      uint8_t sc, m;
      ref::unpack_scale_min_k4(blk + 4, s, sc, m);
      const ActBlock& a = acts[s];
      const __m256i lanes = dot_u8_s8(halves[h], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q)));
      acc = _mm256_fmadd_ps(_mm256_set1_ps(d * a.d), _mm256_cvtepi32_ps(_mm256_mullo_epi32(lanes, _mm256_set1_epi32(sc))), acc);
      mins += (dmin * a.d) * float(m * a.sum);
    }
  }
  return hsum(acc) - mins;
}

template <float (*SuperBlockDot)(const uint8_t*, const ActBlock*), int64_t kSuperBytes>
inline void run_k_task(const QuantDotTask& task) {
  const int64_t n_super = task.n_blocks / 8;
  for (int64_t t = 0; t < task.n_tokens; ++t) {
    const ActBlock* acts = task.acts + t * task.n_blocks;
    for (int64_t r = task.row_begin; r < task.row_end; ++r) {
      const uint8_t* row = task.w + r * task.row_bytes;
      float sum = 0.0f;
      for (int64_t b = 0; b < n_super; ++b) sum += SuperBlockDot(row + b * kSuperBytes, acts + b * 8);
      task.y[t * task.y_stride + r] = sum;
    }
  }
}

template <DType T>
void run_task(const QuantDotTask& task) {
  const int64_t block_bytes = dtype_info(T).block_bytes;
  if (task.n_tokens < 4) {
    // Decode: weights stream from memory once; 4 rows at a time keep 4 chains in flight per token.
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      int64_t r = task.row_begin;
      for (; r + 4 <= task.row_end; r += 4) run_tile<T, 4, 1>(task, r, t, block_bytes);
      for (; r < task.row_end; ++r) run_tile<T, 1, 1>(task, r, t, block_bytes);
    }
    return;
  }
  constexpr int64_t kTokenChunk = 64;  // keeps a chunk of activations in L2 while rows stream by
  for (int64_t t0 = 0; t0 < task.n_tokens; t0 += kTokenChunk) {
    const int64_t t_end = std::min(task.n_tokens, t0 + kTokenChunk);
    int64_t r = task.row_begin;
    for (; r + 2 <= task.row_end; r += 2) {
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) run_tile<T, 2, 4>(task, r, t, block_bytes);
      for (; t < t_end; ++t) run_tile<T, 2, 1>(task, r, t, block_bytes);
    }
    for (; r < task.row_end; ++r) {
      int64_t t = t0;
      for (; t + 4 <= t_end; t += 4) run_tile<T, 1, 4>(task, r, t, block_bytes);
      for (; t < t_end; ++t) run_tile<T, 1, 1>(task, r, t, block_bytes);
    }
  }
}

}  // namespace RIDGE_QDOT_NS

void RIDGE_QDOT_FN(const QuantDotTask& task) {
  switch (task.type) {
    case DType::Q4_0: return RIDGE_QDOT_NS::run_task<DType::Q4_0>(task);
    case DType::Q4_1: return RIDGE_QDOT_NS::run_task<DType::Q4_1>(task);
    case DType::Q8_0: return RIDGE_QDOT_NS::run_task<DType::Q8_0>(task);
    case DType::Q4_K: return RIDGE_QDOT_NS::run_k_task<RIDGE_QDOT_NS::q4k_dot_superblock, 144>(task);
    case DType::Q6_K: return RIDGE_QDOT_NS::run_k_task<RIDGE_QDOT_NS::q6k_dot_superblock, 210>(task);
    default: break;
  }
}

}  // namespace ridge::cpu
