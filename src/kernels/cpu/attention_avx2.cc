// One attention tile over an f16 cache with AVX2 (attention_tile_simd.h, over two 256-bit registers
// of eight floats), bit for bit the scalar kernel of attention.cc.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive_avx2.h"

// exp_nonpositive8 must round as the scalar exp_nonpositive does: nothing fused.
#pragma GCC optimize("fp-contract=off")

namespace ridge::cpu {
namespace {

// Sixteen floats as two registers (16 of them on AVX2): four score rows per key load over one
// group of positions, four value rows per value load of one vector.
struct V256x2 {
  struct T {
    __m256 lo, hi;
  };
  static constexpr int kScoreRows = 4, kScoreGroups = 1, kValueRows = 4, kMaxValueVectors = 1;
  static T zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static T set1(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
  static T loadu(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void storeu(float* p, T v) { _mm256_storeu_ps(p, v.lo), _mm256_storeu_ps(p + 8, v.hi); }
  static T load_f16(const uint16_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  static T fmadd(T a, T b, T c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
  static T mul(T a, T b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static T sub(T a, T b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  static T add(T a, T b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static T max(T a, T b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  static float reduce_max(T v) {
    const __m256 m8 = _mm256_max_ps(v.lo, v.hi);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
  }
  static T exp_nonpositive(T x) { return {exp_nonpositive8(x.lo), exp_nonpositive8(x.hi)}; }
  static __m256 round8(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
  static T round_f16(T v) { return {round8(v.lo), round8(v.hi)}; }
};

#include "kernels/cpu/attention_tile_simd.h"

}  // namespace

void exp_nonpositive_avx2(const float* x, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp_nonpositive8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = exp_nonpositive(x[i]);
}

void attention_tile_f16_avx2(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                             const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                             int64_t partial_stride) {
  tile_f16_any<V256x2>(args, queries, tile, kv, table, scratch, partials, partial_stride);
}

}  // namespace ridge::cpu
