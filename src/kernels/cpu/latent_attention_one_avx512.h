#pragma once
// One token over one tile of an f16 keys-only store, straight from the stored blocks (the decode
// step of latent attention), for the AVX-512 build of latent_attention_body.h. A block keeps each
// latent dimension's positions side by side ((width, block_size)), so sixteen positions' scores
// are one conversion, one multiply and one add per dimension; for P·V sixteen dimensions of sixteen
// positions are converted and transposed in registers. Every sum is the portable body's chain in
// the same order (multiply, then add; f16 to f32 is exact), so the bits are its bits.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/cpu/latent_attention.h"

namespace ridge::cpu {
namespace {

// r[i] = row i of a 16 x 16 matrix of floats -> r[i] = column i.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // u[4k + m] holds, in 128-bit lane L, elements (rows 4k..4k+3) x (column 4L + m).
  for (int k = 0; k < 4; k += 2)
    for (int m = 0; m < 4; ++m) {
      t[4 * k + m] = _mm512_shuffle_f32x4(u[4 * k + m], u[4 * (k + 1) + m], 0x88);
      t[4 * (k + 1) + m] = _mm512_shuffle_f32x4(u[4 * k + m], u[4 * (k + 1) + m], 0xdd);
    }
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
    r[4 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0xdd);
  }
}

// x[i] = round_to_f16(x[i]) for i < n, sixteen at a time by the hardware's conversion (round to
// nearest even, as the portable function rounds).
inline void round_to_f16_avx512(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  for (; i < n; ++i) x[i] = round_to_f16(x[i]);
}

// Whether latent_tile_one_f16 can run: an f16 store whose blocks hold whole groups of 16 positions.
inline bool latent_tile_one_fits(const KvLayerView& kv) { return kv.dtype == KvDtype::F16 && kv.block_size % 16 == 0; }

// scratch: (n_heads, kAttentionTile) scores, then (width) for the rounded query.
void latent_tile_one_f16(const ref::LatentAttentionArgs& args, const float* q, int32_t position, int64_t tile,
                         const KvLayerView& kv, std::span<const BlockId> table, float* scratch, float* partial) {
  const int64_t width = args.width(), latent = args.latent_dim, bs = kv.block_size;
  const int64_t begin = tile * kAttentionTile;
  const int64_t n = std::min<int64_t>(int64_t(position) + 1, begin + kAttentionTile) - begin;
  const int64_t groups = (n + 15) / 16;
  float* scores = scratch;
  float* q_head = scores + kAttentionTile * args.n_heads;
  auto group_keys = [&](int64_t g) {  // the group's first position of dimension 0; dimension d at + d * bs
    const int64_t p = begin + 16 * g;
    return reinterpret_cast<const uint16_t*>(kv.key_head(table[size_t(p / bs)], 0)) + p % bs;
  };
  auto load16 = [](const uint16_t* at) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)));
  };
  for (int64_t h = 0; h < args.n_heads; ++h) {
    std::copy_n(q + h * width, width, q_head);
    round_to_f16_avx512(q_head, width);
    float* s = scores + h * kAttentionTile;
    for (int64_t g = 0; g < groups; ++g) {  // lanes past n hold another position's score: never read
      const uint16_t* keys = group_keys(g);
      __m512 acc = _mm512_setzero_ps();
      for (int64_t d = 0; d < width; ++d)
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(q_head[d]), load16(keys + d * bs)));
      _mm512_storeu_ps(s + 16 * g, acc);
    }
    float max_score = -INFINITY;
    for (int64_t j = 0; j < n; ++j) max_score = std::max(max_score, s[j] *= args.scale);
    double sum = 0.0;  // in double, as the ordinary attention tiles
    for (int64_t j = 0; j < n; ++j) sum += double(s[j] = std::exp(s[j] - max_score));
    round_to_f16_avx512(s, n);
    float* part = partial + h * (latent + 2);
    part[0] = max_score;
    part[1] = float(sum);
    std::fill(part + 2, part + 2 + latent, 0.0f);
  }
  // out[h][d] += p[h][j] v[j][d], j in order: sixteen dimensions of sixteen positions transposed at once.
  __m512 cols[16];
  for (int64_t g = 0; g < groups; ++g) {
    const uint16_t* keys = group_keys(g);
    const int64_t count = std::min<int64_t>(16, n - 16 * g);
    for (int64_t d0 = 0; d0 + 16 <= latent; d0 += 16) {
      for (int i = 0; i < 16; ++i) cols[i] = load16(keys + (d0 + i) * bs);
      transpose16(cols);  // cols[j]: dimensions d0..d0+15 of position 16 g + j
      for (int64_t h = 0; h < args.n_heads; ++h) {
        const float* p = scores + h * kAttentionTile + 16 * g;
        float* out = partial + h * (latent + 2) + 2 + d0;
        __m512 acc = _mm512_loadu_ps(out);
        for (int64_t j = 0; j < count; ++j) acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(p[j]), cols[j]));
        _mm512_storeu_ps(out, acc);
      }
    }
    for (int64_t d = latent / 16 * 16; d < latent; ++d)  // a latent width off sixteen: the rest one by one
      for (int64_t h = 0; h < args.n_heads; ++h) {
        const float* p = scores + h * kAttentionTile + 16 * g;
        float* out = partial + h * (latent + 2) + 2;
        for (int64_t j = 0; j < count; ++j) out[d] += p[j] * f16_to_f32(keys[d * bs + j]);
      }
  }
}

}  // namespace
}  // namespace ridge::cpu
