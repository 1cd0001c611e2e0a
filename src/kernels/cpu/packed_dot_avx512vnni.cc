// The packed-layout integer dot kernels (AVX-512 VNNI): four 32-value blocks per 512-bit step.
// 4-bit weights: the 64 bytes of four blocks' nibbles split into low and high halves with two
// instructions and dotted against activations stored in the same order, so lanes 4k..4k+3 hold
// block k; Q4 offsets (Q4_0's -8, Q4_1's minimum) enter as weight coefficient x activation block
// sum. Q8_0: two blocks per register, signs moved onto the activations (exact int32 lanes).
// Every (row, token) pair runs the same instruction sequence whatever the tile, so a token's
// result does not depend on the batch around it.
#include <immintrin.h>

// GCC 12 warns about the deliberately undefined upper lanes inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>

#include "kernels/cpu/packed_layout.h"

namespace ridge::cpu {
namespace {

inline __m512 spread4(__m128 v, const __m512i& idx) { return _mm512_permutexvar_ps(idx, _mm512_zextps128_ps512(v)); }

inline float hsum128(__m128 x) {
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// One row's group, ready for every token.
struct RowGroup {
  __m512i a, b;    // Q4: low / high nibbles; Q8_0: |w| of blocks 0-1 / 2-3
  __mmask64 na, nb;  // Q8_0: lanes where w < 0
  __m512 da, db;   // block scales spread over their lanes (Q8_0: blocks 0-1 / 2-3)
  __m128 coef;     // Q4 offset coefficient per block (x activation block sum)
};

struct ActGroup {
  __m512i a, b;
  __m512 da, db;
  __m128 s;
};

template <DType T>
inline RowGroup load_row_group(const uint8_t* p, int64_t n) {
  const __m512i by4 = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i lo8 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i hi8 = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
  const __mmask8 scales = __mmask8((1u << n) - 1);
  const __m128 d = _mm_cvtph_ps(_mm_maskz_loadu_epi16(scales, p));
  RowGroup g;
  if constexpr (T == DType::Q8_0) {
    const uint8_t* q = p + 2 * n;
    const __mmask64 m0 = n >= 2 ? ~__mmask64(0) : (__mmask64(1) << 32) - 1;
    const __mmask64 m1 = n == 4 ? ~__mmask64(0) : n == 3 ? (__mmask64(1) << 32) - 1 : 0;
    const __m512i w0 = _mm512_maskz_loadu_epi8(m0, q), w1 = _mm512_maskz_loadu_epi8(m1, q + 64);
    g.a = _mm512_abs_epi8(w0);
    g.b = _mm512_abs_epi8(w1);
    g.na = _mm512_movepi8_mask(w0);
    g.nb = _mm512_movepi8_mask(w1);
    g.da = spread4(d, lo8);
    g.db = spread4(d, hi8);
  } else {
    const int64_t header = T == DType::Q4_1 ? 4 : 2;
    const __mmask64 mq = n == 4 ? ~__mmask64(0) : (__mmask64(1) << (16 * n)) - 1;
    const __m512i w = _mm512_maskz_loadu_epi8(mq, p + header * n);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    g.a = _mm512_and_si512(w, low4);
    g.b = _mm512_and_si512(_mm512_srli_epi16(w, 4), low4);
    g.da = spread4(d, by4);
    g.coef = T == DType::Q4_1 ? _mm_cvtph_ps(_mm_maskz_loadu_epi16(scales, p + 2 * n)) : _mm_mul_ps(d, _mm_set1_ps(-8.0f));
  }
  return g;
}

template <DType T>
inline ActGroup load_act_group(const PackedActGroup& a) {
  const __m512i by4 = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i lo8 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i hi8 = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
  ActGroup g;
  g.a = _mm512_loadu_si512(a.q);
  g.b = _mm512_loadu_si512(a.q + 64);
  const __m128 d = _mm_loadu_ps(a.d);
  if constexpr (T == DType::Q8_0) {
    g.da = spread4(d, lo8);
    g.db = spread4(d, hi8);
  } else {
    g.da = spread4(d, by4);
    g.s = _mm_loadu_ps(a.s);
  }
  return g;
}

template <DType T>
inline void accumulate(const RowGroup& w, const ActGroup& a, __m512& acc, __m128& corr) {
  const __m512i zero = _mm512_setzero_si512();
  if constexpr (T == DType::Q8_0) {
    const __m512i s0 = _mm512_mask_sub_epi8(a.a, w.na, zero, a.a);
    const __m512i s1 = _mm512_mask_sub_epi8(a.b, w.nb, zero, a.b);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(zero, w.a, s0)), _mm512_mul_ps(w.da, a.da), acc);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(zero, w.b, s1)), _mm512_mul_ps(w.db, a.db), acc);
  } else {
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, w.a, a.a), w.b, a.b);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(w.da, a.da), acc);
    corr = _mm_fmadd_ps(w.coef, a.s, corr);
  }
}

template <DType T, int NR, int NT>
inline void tile(const PackedDotTask& task, int64_t r0, int64_t t0, int64_t n_groups) {
  __m512 acc[NR][NT];
  __m128 corr[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) {
      acc[r][t] = _mm512_setzero_ps();
      corr[r][t] = _mm_setzero_ps();
    }
  const int64_t group_bytes = task.row_bytes / std::max<int64_t>(task.n_blocks, 1) * kPackGroup;
  for (int64_t g = 0; g < n_groups; ++g) {
    const int64_t n = std::min<int64_t>(kPackGroup, task.n_blocks - g * kPackGroup);
    RowGroup w[NR];
    for (int r = 0; r < NR; ++r) w[r] = load_row_group<T>(task.w + (r0 + r) * task.row_bytes + g * group_bytes, n);
    for (int t = 0; t < NT; ++t) {
      const ActGroup a = load_act_group<T>(task.acts[(t0 + t) * n_groups + g]);
      for (int r = 0; r < NR; ++r) accumulate<T>(w[r], a, acc[r][t], corr[r][t]);
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r)
      task.y[(t0 + t) * task.y_stride + r0 + r] = _mm512_reduce_add_ps(acc[r][t]) + hsum128(corr[r][t]);
}

template <DType T>
void run(const PackedDotTask& task) {
  const int64_t n_groups = (task.n_blocks + kPackGroup - 1) / kPackGroup;
  if (task.n_tokens < 4) {
    for (int64_t t = 0; t < task.n_tokens; ++t) {
      int64_t r = task.row_begin;
      for (; r + 4 <= task.row_end; r += 4) tile<T, 4, 1>(task, r, t, n_groups);
      for (; r < task.row_end; ++r) tile<T, 1, 1>(task, r, t, n_groups);
    }
    return;
  }
  constexpr int64_t kTokenChunk = 64;  // a chunk of activations stays in L2 while rows stream by
  for (int64_t c0 = 0; c0 < task.n_tokens; c0 += kTokenChunk) {
    const int64_t c_end = std::min(task.n_tokens, c0 + kTokenChunk);
    int64_t r = task.row_begin;
    for (; r + 2 <= task.row_end; r += 2) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile<T, 2, 4>(task, r, t, n_groups);
      for (; t < c_end; ++t) tile<T, 2, 1>(task, r, t, n_groups);
    }
    for (; r < task.row_end; ++r) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile<T, 1, 4>(task, r, t, n_groups);
      for (; t < c_end; ++t) tile<T, 1, 1>(task, r, t, n_groups);
    }
  }
}

}  // namespace

void packed_dot_avx512vnni(const PackedDotTask& task) {
  switch (task.type) {
    case DType::Q4_0: return run<DType::Q4_0>(task);
    case DType::Q4_1: return run<DType::Q4_1>(task);
    case DType::Q8_0: return run<DType::Q8_0>(task);
    default: break;
  }
}

}  // namespace ridge::cpu
