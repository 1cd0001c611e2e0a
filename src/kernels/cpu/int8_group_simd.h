#pragma once
// SIMD decoders of the 32-value int8 groups of int8_group.h (Q3_K and the codebook i-quants),
// included inside quant_dot_simd.h's per-ISA namespace. Each gives the same integers and the same
// scales (the same f32 expressions) as int8_group(), which the scalar kernel uses.

// Eight sign bits per byte of `signs` (bytes 0..3 for values 0-7, ..., 24-31) applied to `q`.
inline __m256i apply_signs(__m256i q, uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3) {
  constexpr uint64_t kSpread = 0x0101010101010101ull;
  const __m256i bytes = _mm256_set_epi64x(int64_t(s3 * kSpread), int64_t(s2 * kSpread), int64_t(s1 * kSpread), int64_t(s0 * kSpread));
  const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bits), bits);
  return _mm256_sign_epi8(q, _mm256_or_si256(negative, _mm256_set1_epi8(1)));
}

inline __m256i grid64(const uint64_t* grid, int i0, int i1, int i2, int i3) {
  return _mm256_set_epi64x(int64_t(grid[i3]), int64_t(grid[i2]), int64_t(grid[i1]), int64_t(grid[i0]));
}

inline uint32_t load_u32_at(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

inline __m256 half_scales(float s0, float s1) { return _mm256_set_ps(s1, s1, s1, s1, s0, s0, s0, s0); }

template <DType T>
inline WeightBlock int8_group_block(const uint8_t* row, int64_t b) {
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
    const float d = load_f16(p + 108);
    return {q, 0.0f, 0.0f, half_scales(d * float(int8_group_detail::q3k_scale(p + 96, 2 * g)),
                                       d * float(int8_group_detail::q3k_scale(p + 96, 2 * g + 1)))};
  } else if constexpr (T == DType::IQ2_XXS) {
    const uint8_t* p = row + blk * 66;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = load_u32_at(p + 6 + 8 * g);
    const auto& s = ref::kSignsEvenParity;
    const __m256i q = apply_signs(grid64(ref::kIq2xxsGrid, idx[0], idx[1], idx[2], idx[3]), s[aux & 127], s[(aux >> 7) & 127],
                                  s[(aux >> 14) & 127], s[(aux >> 21) & 127]);
    const float sc = load_f16(p) * (0.5f + float(aux >> 28)) * 0.25f;
    return {q, 0.0f, 0.0f, half_scales(sc, sc)};
  } else if constexpr (T == DType::IQ2_XS) {
    const uint8_t* p = row + blk * 74;
    uint16_t v[4];
    __builtin_memcpy(v, p + 2 + 8 * g, 8);
    const auto& s = ref::kSignsEvenParity;
    const __m256i q = apply_signs(grid64(ref::kIq2xsGrid, v[0] & 511, v[1] & 511, v[2] & 511, v[3] & 511), s[v[0] >> 9],
                                  s[v[1] >> 9], s[v[2] >> 9], s[v[3] >> 9]);
    const float d = load_f16(p);
    return {q, 0.0f, 0.0f, half_scales(d * (0.5f + float(p[66 + g] & 0x0f)) * 0.25f, d * (0.5f + float(p[66 + g] >> 4)) * 0.25f)};
  } else if constexpr (T == DType::IQ2_S) {
    const uint8_t* p = row + blk * 82;
    const uint8_t* lo = p + 2 + 4 * g;
    const int hi = p[66 + g];
    const uint8_t* signs = p + 34 + 4 * g;
    const __m256i q = apply_signs(grid64(ref::kIq2sGrid, lo[0] | (hi & 3) << 8, lo[1] | (hi >> 2 & 3) << 8, lo[2] | (hi >> 4 & 3) << 8,
                                         lo[3] | (hi >> 6 & 3) << 8),
                                  signs[0], signs[1], signs[2], signs[3]);
    const float d = load_f16(p);
    return {q, 0.0f, 0.0f, half_scales(d * (0.5f + float(p[74 + g] & 0x0f)) * 0.25f, d * (0.5f + float(p[74 + g] >> 4)) * 0.25f)};
  } else if constexpr (T == DType::IQ3_XXS) {
    const uint8_t* p = row + blk * 98;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = load_u32_at(p + 66 + 4 * g);
    const uint32_t* G = ref::kIq3xxsGrid;
    const __m256i grid = _mm256_set_epi32(int(G[idx[7]]), int(G[idx[6]]), int(G[idx[5]]), int(G[idx[4]]), int(G[idx[3]]),
                                          int(G[idx[2]]), int(G[idx[1]]), int(G[idx[0]]));
    const auto& s = ref::kSignsEvenParity;
    const __m256i q = apply_signs(grid, s[aux & 127], s[(aux >> 7) & 127], s[(aux >> 14) & 127], s[(aux >> 21) & 127]);
    const float sc = load_f16(p) * (0.5f + float(aux >> 28)) * 0.5f;
    return {q, 0.0f, 0.0f, half_scales(sc, sc)};
  } else if constexpr (T == DType::IQ3_S) {
    const uint8_t* p = row + blk * 110;
    const uint8_t* idx = p + 2 + 8 * g;
    const int hi = p[66 + g];
    const uint32_t* G = ref::kIq3sGrid;
    auto e = [&](int k) { return int(G[idx[k] | ((hi >> k) & 1) << 8]); };
    const __m256i grid = _mm256_set_epi32(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
    const uint8_t* signs = p + 74 + 4 * g;
    const __m256i q = apply_signs(grid, signs[0], signs[1], signs[2], signs[3]);
    const float sc = load_f16(p) * float(1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f));
    return {q, 0.0f, 0.0f, half_scales(sc, sc)};
  } else {  // IQ1_S, IQ1_M (8 * grid + delta), TQ1_0 (base-3 digits): the scalar decoder
    alignas(32) int8_t q[32];
    float sc[2];
    int8_group(T, row, b, q, sc);
    return {_mm256_load_si256(reinterpret_cast<const __m256i*>(q)), 0.0f, 0.0f, half_scales(sc[0], sc[1])};
  }
}
