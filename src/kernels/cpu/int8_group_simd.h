#pragma once
// SIMD decoders of the 32-value int8 groups of int8_group.h (Q3_K and the codebook i-quants), included
// inside a kernel unit's private namespace (quant_dot_simd.h, k_dot_wide.h) after <immintrin.h> and
// int8_group.h. Each gives the same integers, multipliers and D (the same f32 expression) as
// int8_group(), which the scalar kernel uses.

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

// Four sign bytes (byte k for values 8k..8k+7, bit j for value 8k+j) applied to `q`: each byte is
// spread over its eight values by one shuffle, then each value's bit picked by a mask.
inline __m256i apply_signs(__m256i q, uint32_t signs) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(signs)),
                                             _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits);
  return _mm256_sub_epi8(_mm256_xor_si256(q, negative), negative);  // -q where the bit is set
}

// Four 7-bit sign codes of the XXS types (bits 0-6, 7-13, 14-20, 21-27 of aux) as four sign bytes.
inline uint32_t even_parity_signs(uint32_t aux) {
  const auto& s = ref::kSignsEvenParity;
  return uint32_t(s[aux & 127]) | uint32_t(s[(aux >> 7) & 127]) << 8 | uint32_t(s[(aux >> 14) & 127]) << 16 |
         uint32_t(s[(aux >> 21) & 127]) << 24;
}

inline __m256i grid64(const uint64_t* grid, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(int64_t(grid[i3]), int64_t(grid[i2]), int64_t(grid[i1]), int64_t(grid[i0]));
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
    return {q, int8_group_detail::q3k_scale(p + 96, 2 * g), int8_group_detail::q3k_scale(p + 96, 2 * g + 1), code_f16(p + 108)};
  } else if constexpr (T == DType::IQ2_XXS) {
    const uint8_t* p = row + blk * 66;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = code_u32(p + 6 + 8 * g);
    const __m256i q = apply_signs(grid64(ref::kIq2xxsGrid, idx[0], idx[1], idx[2], idx[3]), even_parity_signs(aux));
    const int32_t m = int32_t(2 * (aux >> 28) + 1);
    return {q, m, m, code_f16(p) * 0.125f};
  } else if constexpr (T == DType::IQ2_XS) {
    const uint8_t* p = row + blk * 74;
    uint16_t v[4];
    __builtin_memcpy(v, p + 2 + 8 * g, 8);
    const auto& s = ref::kSignsEvenParity;
    const uint32_t signs = uint32_t(s[v[0] >> 9]) | uint32_t(s[v[1] >> 9]) << 8 | uint32_t(s[v[2] >> 9]) << 16 | uint32_t(s[v[3] >> 9]) << 24;
    const __m256i q = apply_signs(grid64(ref::kIq2xsGrid, v[0] & 511, v[1] & 511, v[2] & 511, v[3] & 511), signs);
    return {q, 2 * (p[66 + g] & 0x0f) + 1, 2 * (p[66 + g] >> 4) + 1, code_f16(p) * 0.125f};
  } else if constexpr (T == DType::IQ2_S) {
    const uint8_t* p = row + blk * 82;
    const uint8_t* lo = p + 2 + 4 * g;
    const int hi = p[66 + g];
    const __m256i q = apply_signs(grid64(ref::kIq2sGrid, lo[0] | (hi & 3) << 8, lo[1] | (hi >> 2 & 3) << 8, lo[2] | (hi >> 4 & 3) << 8,
                                         lo[3] | (hi >> 6 & 3) << 8),
                                  code_u32(p + 34 + 4 * g));
    return {q, 2 * (p[74 + g] & 0x0f) + 1, 2 * (p[74 + g] >> 4) + 1, code_f16(p) * 0.125f};
  } else if constexpr (T == DType::IQ3_XXS) {
    const uint8_t* p = row + blk * 98;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = code_u32(p + 66 + 4 * g);
    const uint32_t* G = ref::kIq3xxsGrid;
    const __m256i grid = _mm256_set_epi32(int(G[idx[7]]), int(G[idx[6]]), int(G[idx[5]]), int(G[idx[4]]), int(G[idx[3]]),
                                          int(G[idx[2]]), int(G[idx[1]]), int(G[idx[0]]));
    const int32_t m = int32_t(2 * (aux >> 28) + 1);
    return {apply_signs(grid, even_parity_signs(aux)), m, m, code_f16(p) * 0.25f};
  } else if constexpr (T == DType::IQ3_S) {
    const uint8_t* p = row + blk * 110;
    const uint8_t* idx = p + 2 + 8 * g;
    const int hi = p[66 + g];
    const uint32_t* G = ref::kIq3sGrid;
    auto e = [&](int k) { return int(G[idx[k] | ((hi >> k) & 1) << 8]); };
    const __m256i grid = _mm256_set_epi32(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
    const int32_t m = 1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f);
    return {apply_signs(grid, code_u32(p + 74 + 4 * g)), m, m, code_f16(p)};
  } else {  // IQ1_S, IQ1_M (8 * grid + delta), TQ1_0 (base-3 digits): the scalar decoder
    alignas(32) int8_t q[32];
    int32_t m[2];
    const float d = int8_group(T, row, b, q, m);
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(q)), m[0], m[1], d};
  }
}
