#pragma once
// The int8 group types' integer dot tiles (int8_group.h: Q3_K, IQ4_XS, TQ1_0, TQ2_0, the codebook
// i-quants), included inside quant_dot_simd.h's per-ISA namespace after its shared helpers
// (dot_u8_s8, sum_each, fuse_groups, prefetch_ahead) and int8_group_simd.h: the general tile of NR
// rows x NT tokens, and the one-token decode of the types whose halves share one multiplier. Both
// give quant_dot_scalar.cc's bits.

// The general tile, in the arithmetic of
// quant_dot_scalar.cc: per group the exact integer I = m0 * Σ_lo q·a + m1 * Σ_hi q·a, fused into each
// (row, token)'s f32 chain in group order. A super-block's eight groups are reduced together.
template <DType T, int NR, int NT>
inline void code_tile(const QuantDotTask& task, int64_t r, int64_t t) {
  constexpr int64_t kSuperBytes = code_super_bytes<T>();
  float acc[NR][NT] = {};
  for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
    const uint8_t* row[NR];
    float d[NR];
    for (int i = 0; i < NR; ++i) {
      row[i] = task.w + (r + i) * task.row_bytes;
      prefetch_ahead<NT>(row[i] + b * kSuperBytes, kSuperBytes);
    }
    __m256i group_sums[NR][NT][8];  // per group: lanes of Σ q·a times their half's multiplier
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      for (int i = 0; i < NR; ++i) {
        const CodeGroup c = code_group<T>(row[i], b * 8 + g);
        d[i] = c.d;
        const __m256i mult = _mm256_set_m128i(_mm_set1_epi32(c.m1), _mm_set1_epi32(c.m0));
        const __m256i magnitude = _mm256_sign_epi8(c.q, c.q);
        for (int j = 0; j < NT; ++j) {
          const ActBlock& a = task.acts[(t + j) * task.n_blocks + b * 8 + g];
          const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
          group_sums[i][j][g] = _mm256_mullo_epi32(dot_u8_s8(magnitude, _mm256_sign_epi8(q, c.q)), mult);
        }
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

// Decode (one token) of the int8 group types whose two halves share one multiplier, in fewer
// instructions than code_tile and to the same exact integers (so the same bits): each group's
// Σ q·a comes from unsigned magnitudes against the activations with the weights' signs applied (no
// signed values built, as llama.cpp's kernels do it), a sum of the activations corrects the types
// stored with an offset (TQ2_0: q = u - 1; IQ1_S: q = 8(u - 1) + delta, so X = 8 Σ u·a + (delta - 8) Σ a),
// and the multipliers apply to a super-block's eight reduced sums at once. (IQ4_XS measured no
// faster this way.)
template <DType T>
constexpr bool kFastDecode = T == DType::IQ2_XXS || T == DType::IQ3_XXS || T == DType::IQ3_S ||
                             T == DType::TQ2_0 || T == DType::IQ1_S;

// The XXS types' 7-bit sign codes (with their parity bit) as eight bytes of +1 / -1.
inline constexpr std::array<uint64_t, 128> kSigns64 = [] {
  std::array<uint64_t, 128> t{};
  for (int c = 0; c < 128; ++c)
    for (int j = 0; j < 8; ++j) t[size_t(c)] |= uint64_t((ref::kSignsEvenParity[size_t(c)] >> j) & 1 ? 0xff : 0x01) << (8 * j);
  return t;
}();

inline __m256i signs64(uint32_t aux) {
  return _mm256_set_epi64x(int64_t(kSigns64[(aux >> 21) & 127]), int64_t(kSigns64[(aux >> 14) & 127]),
                           int64_t(kSigns64[(aux >> 7) & 127]), int64_t(kSigns64[aux & 127]));
}

// Group b's dot lanes against activation quants `aq`; its multiplier m and the coefficient c of the
// activations' sum (X = k Σ lanes + c Σ a, k = 8 for IQ1_S, else 1).
template <DType T>
inline __m256i fast_group(const uint8_t* row, int64_t b, const int8_t* aq, int32_t& m, int32_t& c) {
  const int g = int(b & 7);
  const int64_t blk = b >> 3;
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(aq));
  if constexpr (T == DType::IQ2_XXS) {
    const uint8_t* p = row + blk * 66;
    const uint8_t* idx = p + 2 + 8 * g;
    const uint32_t aux = code_u32(p + 6 + 8 * g);
    m = int32_t(2 * (aux >> 28) + 1), c = 0;
    return dot_u8_s8(grid64(ref::kIq2xxsGrid, idx[0], idx[1], idx[2], idx[3]), _mm256_sign_epi8(a, signs64(aux)));
  } else if constexpr (T == DType::IQ3_XXS) {
    const uint8_t* p = row + blk * 98;
    const uint32_t aux = code_u32(p + 66 + 4 * g);
    m = int32_t(2 * (aux >> 28) + 1), c = 0;
    return dot_u8_s8(iq3xxs_entries(p + 2 + 8 * g), _mm256_sign_epi8(a, signs64(aux)));
  } else if constexpr (T == DType::IQ3_S) {
    const uint8_t* p = row + blk * 110;
    const __m256i mag = iq3s_entries(p + 2 + 8 * g, p[66 + g]);
    m = 1 + 2 * ((p[106 + g / 2] >> (4 * (g % 2))) & 0x0f), c = 0;
    return dot_u8_s8(mag, _mm256_sign_epi8(a, _mm256_or_si256(negative_mask(code_u32(p + 74 + 4 * g)), _mm256_set1_epi8(1))));
  } else if constexpr (T == DType::IQ1_S) {
    const uint8_t* p = row + blk * 50;
    const uint8_t* lo = p + 2 + 4 * g;
    uint16_t qh16;
    __builtin_memcpy(&qh16, p + 34 + 2 * g, 2);
    const uint32_t qh = qh16;
    const __m256i grid = grid64(ref::kIq1sGrid, lo[0] | (qh & 7) << 8, lo[1] | (qh >> 3 & 7) << 8, lo[2] | (qh >> 6 & 7) << 8,
                                lo[3] | (qh >> 9 & 7) << 8);
    m = int32_t(2 * ((qh >> 12) & 7) + 1), c = (qh & 0x8000 ? -1 : 1) - 8;
    return dot_u8_s8(_mm256_add_epi8(grid, _mm256_set1_epi8(1)), a);  // u = g + 1 in 0..2; X = 8 Σ u·a + c Σ a
  } else {
    static_assert(T == DType::TQ2_0);
    const uint8_t* p = row + blk * 66;
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * (g / 4)));
    m = 1, c = -1;
    return dot_u8_s8(_mm256_and_si256(_mm256_srli_epi16(bytes, 2 * (g % 4)), _mm256_set1_epi8(3)), a);  // u = q + 1
  }
}

template <DType T, int NR>
inline void code_decode_tile(const QuantDotTask& task, int64_t r, int64_t t) {
  constexpr int64_t kSuperBytes = code_super_bytes<T>();
  float acc[NR] = {};
  const ActBlock* acts = task.acts + t * task.n_blocks;
  for (int64_t b = 0; b < task.n_blocks / 8; ++b) {
    const uint8_t* row[NR];
    float d[NR];
    __m256i lanes[NR][8];
    alignas(32) int32_t m[NR][8], cs[NR][8];
    for (int i = 0; i < NR; ++i) {
      row[i] = task.w + (r + i) * task.row_bytes;
      prefetch_ahead<1>(row[i] + b * kSuperBytes, kSuperBytes);
      d[i] = code_scale<T>(row[i] + b * kSuperBytes);
    }
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const ActBlock& a = acts[b * 8 + g];
      for (int i = 0; i < NR; ++i) {
        int32_t c;
        lanes[i][g] = fast_group<T>(row[i], b * 8 + g, a.q, m[i][g], c);
        cs[i][g] = c * a.sum;
      }
    }
    for (int i = 0; i < NR; ++i) {
      __m256i x = sum_each(lanes[i]);
      if constexpr (T == DType::IQ1_S) x = _mm256_slli_epi32(x, 3);
      x = _mm256_add_epi32(x, _mm256_load_si256(reinterpret_cast<const __m256i*>(cs[i])));
      acc[i] = fuse_groups(_mm256_mullo_epi32(x, _mm256_load_si256(reinterpret_cast<const __m256i*>(m[i]))), d[i], acts + b * 8, acc[i]);
    }
  }
  for (int i = 0; i < NR; ++i) task.y[t * task.y_stride + r + i] = acc[i];
}

template <DType T>  // an int8 group type
struct CodeTiles {
  static constexpr int kDecodeRows = 2;
  template <int NR, int NT>
  static void tile(const QuantDotTask& task, int64_t r, int64_t t) {
    if constexpr (NT == 1 && kFastDecode<T>)
      code_decode_tile<T, NR>(task, r, t);
    else
      code_tile<T, NR, NT>(task, r, t);
  }
};
