#pragma once
// The 256-bit Wide operations for k_dot_wide.h: eight rows per register. dot4 is one vpdpbusd with
// AVX-VNNI (RIDGE_KW_VNNI 1), else a vpmaddubsw (pairs of at most 2 x 63 x 127: no saturation) and
// a vpmaddwd. Included inside the unit's private namespace.
struct Wide {
  static constexpr int64_t kLanes = 8;
  static constexpr bool kFullBytes = RIDGE_KW_VNNI;  // dot4 exact for unsigned bytes up to 255
  using I = __m256i;
  using F = __m256;
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }
  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
#if RIDGE_KW_VNNI
  static I dot4(I acc, I u8, I s8) { return _mm256_dpbusd_avx_epi32(acc, u8, s8); }
#else
  static I dot4(I acc, I u8, I s8) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u8, s8), _mm256_set1_epi16(1)));
  }
#endif
  static I add(I a, I b) { return _mm256_add_epi32(a, b); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static F cvt(I a) { return _mm256_cvtepi32_ps(a); }
  static F zerof() { return _mm256_setzero_ps(); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static F mulf(F a, F b) { return _mm256_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm256_add_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  // Lane n: column[8 n] (one dword of each of 8 rows of eight dwords).
  static I gather_column(const uint32_t* column) {
    return _mm256_i32gather_epi32(reinterpret_cast<const int*>(column), _mm256_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56), 4);
  }
};
