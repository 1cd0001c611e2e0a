#pragma once
// SIMD decoders of the 32-value int8 groups of int8_group.h (Q3_K and the codebook i-quants), included
// inside a kernel unit's private namespace (quant_dot_simd.h, k_dot_wide.h) after <immintrin.h> and
// int8_group.h. Each gives the same integers, multipliers and D (the same f32 expression) as
// int8_group(), which the scalar kernel uses.
//
// RIDGE_IQ_GATHER 1 (a unit's choice, before including): IQ3's eight 4-byte entries fetched by vpgather, which on
// the Intel cores measured is about twice as fast as loading and inserting them one by one (IQ3_S
// GEMV on the AMX Xeon, one thread: 12.6 -> 23.0 GFLOP/s); 0 keeps the scalar loads.
#ifndef RIDGE_IQ_GATHER
#define RIDGE_IQ_GATHER 0
#endif

struct CodeGroup {
  __m256i q;       // the group's 32 signed values
  int32_t m0, m1;  // the multipliers of values 0-15 and 16-31
  float d;         // the super-block's scale D
};

inline float code_f16(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline uint32_t code_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

// Four sign bytes (byte k for values 8k..8k+7, bit j for value 8k+j) as a byte mask, 0xff where the
// value is negative: each byte is spread over its eight values by one shuffle, then each value's bit
// picked by a mask.
inline __m256i negative_mask(uint32_t signs) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(signs)),
                                             _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits);
}

// Those signs applied to `q`.
inline __m256i apply_signs(__m256i q, uint32_t signs) {
  const __m256i negative = negative_mask(signs);
  return _mm256_sub_epi8(_mm256_xor_si256(q, negative), negative);  // -q where the bit is set
}

// IQ3_XXS's eight grid entries of a group (`idx`: its eight index bytes).
inline __m256i iq3xxs_entries(const uint8_t* idx) {
#if RIDGE_IQ_GATHER
  return _mm256_i32gather_epi32(reinterpret_cast<const int*>(ref::kIq3xxsGrid),
                                _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(idx))), 4);
#else
  const uint32_t* G = ref::kIq3xxsGrid;
  return _mm256_set_epi32(int(G[idx[7]]), int(G[idx[6]]), int(G[idx[5]]), int(G[idx[4]]), int(G[idx[3]]), int(G[idx[2]]),
                          int(G[idx[1]]), int(G[idx[0]]));
#endif
}

// IQ3_S's eight grid entries of a group: index k is byte k of `idx` with bit k of `hi` as its ninth bit.
inline __m256i iq3s_entries(const uint8_t* idx, int hi) {
#if RIDGE_IQ_GATHER
  const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(idx)));
  const __m256i ninth = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(hi), _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1)),
                                         _mm256_set1_epi32(256));
  return _mm256_i32gather_epi32(reinterpret_cast<const int*>(ref::kIq3sGrid), _mm256_or_si256(low, ninth), 4);
#else
  const uint32_t* G = ref::kIq3sGrid;
  auto e = [&](int k) { return int(G[idx[k] | ((hi >> k) & 1) << 8]); };
  return _mm256_set_epi32(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
#endif
}

// Four 7-bit sign codes of the XXS types (bits 0-6, 7-13, 14-20, 21-27 of aux) as four sign bytes.
inline uint32_t even_parity_signs(uint32_t aux) {
  const auto& s = ref::kSignsEvenParity;
  return uint32_t(s[aux & 127]) | uint32_t(s[(aux >> 7) & 127]) << 8 | uint32_t(s[(aux >> 14) & 127]) << 16 |
         uint32_t(s[(aux >> 21) & 127]) << 24;
}

// Four 8-byte entries: loaded one by one (a four-entry vpgather measured no faster).
inline __m256i grid64(const uint64_t* grid, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(int64_t(grid[i3]), int64_t(grid[i2]), int64_t(grid[i1]), int64_t(grid[i0]));
}

// IQ1's values 8g + delta, byte by byte (a 16-bit shift would carry between bytes).
inline __m256i eight_times_plus(__m256i g, __m256i delta) {
  const __m256i g2 = _mm256_add_epi8(g, g), g4 = _mm256_add_epi8(g2, g2);
  return _mm256_add_epi8(_mm256_add_epi8(g4, g4), delta);
}

// Bytes of one 256-value super-block.
template <DType T>
constexpr int64_t code_super_bytes() {
  switch (T) {
    case DType::IQ2_XXS: return 66;
    case DType::IQ2_XS: return 74;
    case DType::IQ2_S: return 82;
    case DType::IQ3_XXS: return 98;
    case DType::IQ1_S: return 50;
    case DType::IQ4_XS: return 136;
    case DType::TQ2_0: return 66;
    case DType::IQ1_M: return 56;
    case DType::TQ1_0: return 54;
    default: return 110;  // Q3_K, IQ3_S
  }
}

// The super-block's scale D (int8_group()'s return value, the same f32 expression).
template <DType T>
inline float code_scale(const uint8_t* p) {
  if constexpr (T == DType::Q3_K) return code_f16(p + 108);
  if constexpr (T == DType::TQ1_0) return code_f16(p + 52);
  if constexpr (T == DType::TQ2_0) return code_f16(p + 64);
  if constexpr (T == DType::IQ2_XXS || T == DType::IQ2_XS || T == DType::IQ2_S || T == DType::IQ1_S) return code_f16(p) * 0.125f;
  if constexpr (T == DType::IQ3_XXS) return code_f16(p) * 0.25f;
  if constexpr (T == DType::IQ1_M) {  // d sits in the top nibbles of the four u16 scales
    uint16_t sc[4];
    __builtin_memcpy(sc, p + 48, 8);
    return _cvtsh_ss(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000))) * 0.125f;
  }
  return code_f16(p);  // IQ3_S, IQ4_XS
}

template <DType T>
inline CodeGroup code_group(const uint8_t* row, int64_t b) {
  const int g = int(b & 7);
  const int64_t blk = b >> 3;
  if constexpr (T == DType::Q3_K) {
    const uint8_t* p = row + blk * 110;
    const __m256i lows = _mm256_and_si256(
        _mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 + 32 * (g / 4))), 2 * (g % 4)),
        _mm256_set1_epi8(3));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), g),
                                          _mm256_set1_epi8(1));
    // A clear high bit subtracts 4: high 0 -> 4, 1 -> 0.
    const __m256i q = _mm256_sub_epi8(lows, _mm256_andnot_si256(_mm256_slli_epi16(high, 2), _mm256_set1_epi8(4)));
    return {q, int8_group_detail::q3k_scale(p + 96, 2 * g), int8_group_detail::q3k_scale(p + 96, 2 * g + 1), code_scale<T>(p)};
  } else if constexpr (T == DType::TQ2_0) {
    const uint8_t* p = row + blk * 66;
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * (g / 4)));
    const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bytes, 2 * (g % 4)), _mm256_set1_epi8(3));
    return {_mm256_sub_epi8(q, _mm256_set1_epi8(1)), 1, 1, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ4_XS) {
    const uint8_t* p = row + blk * 136;
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8 + 16 * g));
    const __m128i low4 = _mm_set1_epi8(0x0f);
    const __m256i codes = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), low4), _mm_and_si128(x, low4));
    const __m256i levels = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ref::kIq4nlValues.data())));
    uint16_t scales_h;
    __builtin_memcpy(&scales_h, p + 2, 2);
    const int32_t m = (((p[4 + g / 2] >> (4 * (g % 2))) & 0x0f) | ((scales_h >> (2 * g)) & 3) << 4) - 32;
    return {_mm256_shuffle_epi8(levels, codes), m, m, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ2_XXS) {
    const uint8_t* p = row + blk * 66;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = code_u32(p + 6 + 8 * g);
    const __m256i q = apply_signs(grid64(ref::kIq2xxsGrid, idx[0], idx[1], idx[2], idx[3]), even_parity_signs(aux));
    const int32_t m = int32_t(2 * (aux >> 28) + 1);
    return {q, m, m, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ2_XS) {
    const uint8_t* p = row + blk * 74;
    uint16_t v[4];
    __builtin_memcpy(v, p + 2 + 8 * g, 8);
    const auto& s = ref::kSignsEvenParity;
    const uint32_t signs = uint32_t(s[v[0] >> 9]) | uint32_t(s[v[1] >> 9]) << 8 | uint32_t(s[v[2] >> 9]) << 16 | uint32_t(s[v[3] >> 9]) << 24;
    const __m256i q = apply_signs(grid64(ref::kIq2xsGrid, v[0] & 511, v[1] & 511, v[2] & 511, v[3] & 511), signs);
    return {q, 2 * (p[66 + g] & 0x0f) + 1, 2 * (p[66 + g] >> 4) + 1, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ2_S) {
    const uint8_t* p = row + blk * 82;
    const uint8_t* lo = p + 2 + 4 * g;
    const int hi = p[66 + g];
    const __m256i q = apply_signs(grid64(ref::kIq2sGrid, lo[0] | (hi & 3) << 8, lo[1] | (hi >> 2 & 3) << 8, lo[2] | (hi >> 4 & 3) << 8,
                                         lo[3] | (hi >> 6 & 3) << 8),
                                  code_u32(p + 34 + 4 * g));
    return {q, 2 * (p[74 + g] & 0x0f) + 1, 2 * (p[74 + g] >> 4) + 1, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ3_XXS) {
    const uint8_t* p = row + blk * 98;
    const uint32_t aux = code_u32(p + 66 + 4 * g);
    const int32_t m = int32_t(2 * (aux >> 28) + 1);
    return {apply_signs(iq3xxs_entries(p + 2 + 8 * g), even_parity_signs(aux)), m, m, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ3_S) {
    const uint8_t* p = row + blk * 110;
    const int32_t m = 1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f);
    return {apply_signs(iq3s_entries(p + 2 + 8 * g, p[66 + g]), code_u32(p + 74 + 4 * g)), m, m, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ1_S) {
    const uint8_t* p = row + blk * 50;
    const uint8_t* lo = p + 2 + 4 * g;
    uint16_t qh16;
    __builtin_memcpy(&qh16, p + 34 + 2 * g, 2);
    const uint32_t qh = qh16;  // index arithmetic in 32 bits: 16-bit shifts merge partial registers
    const __m256i grid = grid64(ref::kIq1sGrid, lo[0] | (qh & 7) << 8, lo[1] | (qh >> 3 & 7) << 8, lo[2] | (qh >> 6 & 7) << 8,
                                lo[3] | (qh >> 9 & 7) << 8);
    const int32_t m = 2 * ((qh >> 12) & 7) + 1;
    return {eight_times_plus(grid, _mm256_set1_epi8(qh & 0x8000 ? -1 : 1)), m, m, code_scale<T>(p)};
  } else if constexpr (T == DType::IQ1_M) {
    const uint8_t* p = row + blk * 56;
    const uint8_t* lo = p + 4 * g;
    const uint8_t n0 = p[32 + 2 * g], n1 = p[33 + 2 * g];  // entries 4g, 4g+1 and 4g+2, 4g+3: a nibble each
    const int k0 = n0 & 0x0f, k1 = n0 >> 4, k2 = n1 & 0x0f, k3 = n1 >> 4;
    const __m256i grid = grid64(ref::kIq1sGrid, lo[0] | (k0 & 7) << 8, lo[1] | (k1 & 7) << 8, lo[2] | (k2 & 7) << 8, lo[3] | (k3 & 7) << 8);
    auto delta = [](int k) { return int64_t(k & 8 ? 0xffffffffffffffffull : 0x0101010101010101ull); };
    uint16_t sc16[4];
    __builtin_memcpy(sc16, p + 48, 8);
    const uint32_t sc[4] = {sc16[0], sc16[1], sc16[2], sc16[3]};
    const int32_t m0 = 2 * ((sc[g / 2] >> (6 * (g % 2))) & 7) + 1, m1 = 2 * ((sc[g / 2] >> (6 * (g % 2) + 3)) & 7) + 1;
    return {eight_times_plus(grid, _mm256_set_epi64x(delta(k3), delta(k2), delta(k1), delta(k0))), m0, m1, code_scale<T>(p)};
  } else {  // TQ1_0 (base-3 digits): the scalar decoder
    alignas(32) int8_t q[32];
    int32_t m[2];
    const float d = int8_group(T, row, b, q, m);
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(q)), m[0], m[1], d};
  }
}
