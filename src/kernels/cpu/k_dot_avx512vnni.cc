// The wide K-quant kernels (k_dot_wide.h) on AVX-512 VNNI: sixteen rows per 512-bit register,
// each dot4 one vpdpbusd.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

namespace ridge::cpu::k_avx512 {
struct Wide {
  static constexpr int64_t kLanes = 16;
  static constexpr bool kFullBytes = true;  // dot4 exact for unsigned bytes up to 255
  using I = __m512i;
  using F = __m512;
  static I zero() { return _mm512_setzero_si512(); }
  static I load(const void* p) { return _mm512_load_si512(p); }
  static I set1(int32_t v) { return _mm512_set1_epi32(v); }
  static I dot4(I acc, I u8, I s8) { return _mm512_dpbusd_epi32(acc, u8, s8); }
  static I add(I a, I b) { return _mm512_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  static F cvt(I a) { return _mm512_cvtepi32_ps(a); }
  static F zerof() { return _mm512_setzero_ps(); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static F set1f(float v) { return _mm512_set1_ps(v); }
  static F mulf(F a, F b) { return _mm512_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm512_add_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
  // Lane n: column[8 n] (one dword of each of 16 rows of eight dwords).
  static I gather_column(const uint32_t* column) {
    return _mm512_i32gather_epi32(_mm512_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120),
                                  column, 4);
  }
};
}  // namespace ridge::cpu::k_avx512

#define RIDGE_KW_FN k_dot_tiles_avx512
#define RIDGE_KW_NS k_avx512
#define RIDGE_IQ_GATHER 1  // the codebook grids by vpgather (int8_group_simd.h)
#include "kernels/cpu/k_dot_wide.h"
