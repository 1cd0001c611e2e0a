// One attention tile over an f16 cache with AVX-512 (attention_tile_simd.h, over one 512-bit
// register of sixteen floats), bit for bit the scalar kernel of attention.cc.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/exp_nonpositive_avx512.h"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// exp_nonpositive16 must round as the scalar exp_nonpositive does: nothing fused.
#pragma GCC optimize("fp-contract=off")

namespace ridge::cpu {
namespace {

// Sixteen floats in one register; eight score rows per key load over two groups of positions,
// six value rows per value load of up to four registers (of 32).
struct V512 {
  using T = __m512;
  static constexpr int kScoreRows = 8, kScoreGroups = 2, kValueRows = 6, kMaxValueVectors = 4;
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static float reduce_max(T v) { return _mm512_reduce_max_ps(v); }
  static T exp_nonpositive(T x) { return exp_nonpositive16(x); }
  static T round_f16(T v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
};

#include "kernels/cpu/attention_tile_simd.h"

}  // namespace

void exp_nonpositive_avx512(const float* x, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, exp_nonpositive16(_mm512_loadu_ps(x + i)));
  const __mmask16 m = __mmask16((1u << (n - i)) - 1);
  _mm512_mask_storeu_ps(y + i, m, exp_nonpositive16(_mm512_maskz_loadu_ps(m, x + i)));
}

void attention_tile_f16_avx512(const ref::AttentionArgs& args, const AttentionQueries& queries, int64_t tile,
                               const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partials,
                               int64_t partial_stride) {
  tile_f16_any<V512>(args, queries, tile, kv, table, scratch, partials, partial_stride);
}

}  // namespace ridge::cpu
