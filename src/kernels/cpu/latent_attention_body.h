#pragma once
// The body of the latent attention tile kernel (kernels/cpu/latent_attention.h), compiled once
// portably (latent_attention.cc) and once with AVX-512 flags (latent_attention_avx512vnni.cc). Both
// build without FMA contraction and only vectorise element-wise loops, so every position's score
// and every latent dimension's running sum is the same chain of roundings on every ISA: the wide
// build gives the portable one's bits. Several consecutive tokens of one sequence share one decode
// of the tile's rows (prefill); each keeps its own sums, so its bits do not depend on its company.
#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "core/fp8.h"
#include "kernels/cpu/kv_decode_tables.h"
#include "kernels/cpu/latent_attention.h"
#if defined(__AVX512F__)
#include "kernels/cpu/latent_attention_one_avx512.h"
#endif

namespace ridge::cpu {
namespace {

// Sixteen floats as one value (GCC/Clang vector extension): one register in the AVX-512 build,
// four in the portable one; element-wise, so every lane rounds as the scalar code does.
// (Loads and stores through memcpy, inline: a function taking or returning one would change the
// portable build's ABI.)
typedef float Lanes16 __attribute__((vector_size(64)));

// dst[k] = Σ_i w[i] x[i step + k] for k < width, each a chain 0 + w0 x0 + w1 x1 + ... in i order (the
// scalar loop's bits): sixty-four, then sixteen lanes at a time in registers, four chains in flight.
void weighted_rows(const float* w, int64_t count, const float* x, int64_t step, int64_t width, float* dst) {
  int64_t k0 = 0;
  for (; k0 + 64 <= width; k0 += 64) {
    Lanes16 a0 = {}, a1 = {}, a2 = {}, a3 = {}, v0, v1, v2, v3;
    for (int64_t i = 0; i < count; ++i) {
      const float* row = x + i * step + k0;
      __builtin_memcpy(&v0, row, sizeof v0);
      __builtin_memcpy(&v1, row + 16, sizeof v1);
      __builtin_memcpy(&v2, row + 32, sizeof v2);
      __builtin_memcpy(&v3, row + 48, sizeof v3);
      const float wi = w[i];
      a0 += wi * v0;
      a1 += wi * v1;
      a2 += wi * v2;
      a3 += wi * v3;
    }
    __builtin_memcpy(dst + k0, &a0, sizeof a0);
    __builtin_memcpy(dst + k0 + 16, &a1, sizeof a1);
    __builtin_memcpy(dst + k0 + 32, &a2, sizeof a2);
    __builtin_memcpy(dst + k0 + 48, &a3, sizeof a3);
  }
  for (; k0 + 16 <= width; k0 += 16) {
    Lanes16 a = {}, v;
    for (int64_t i = 0; i < count; ++i) {
      __builtin_memcpy(&v, x + i * step + k0, sizeof v);
      a += w[i] * v;
    }
    __builtin_memcpy(dst + k0, &a, sizeof a);
  }
  for (; k0 < width; ++k0) {
    float a = 0.0f;
    for (int64_t i = 0; i < count; ++i) a += w[i] * x[i * step + k0];
    dst[k0] = a;
  }
}

// Element d of `count` consecutive slots of a keys-only block (stored (width, block_size)) as f32.
template <KvDtype T>
void decode_run(const uint8_t* at, int64_t count, float* out, const float* table) {
  for (int64_t k = 0; k < count; ++k) {
    if constexpr (T == KvDtype::F16 || T == KvDtype::BF16) out[k] = table[reinterpret_cast<const uint16_t*>(at)[k]];
    else if constexpr (T == KvDtype::FP8_E4M3) out[k] = fp8_e4m3_to_f32(at[k]);
    else out[k] = float(int8_t(at[k]));
  }
}

// The tile's positions begin..begin+n-1 as f32 (FP8/INT8 times their row's scale), twice: transposed
// (width, n) for the scores of many positions at once, and as rows (n, width) for P·V over the latent.
template <KvDtype T>
void decode_tile_rows(const KvLayerView& kv, std::span<const BlockId> table, int64_t begin, int64_t n, int64_t width,
                      float* rows, float* keys) {
  const float* lookup = T == KvDtype::F16 ? table16<f16_to_f32>() : T == KvDtype::BF16 ? table16<bf16_to_f32>() : nullptr;
  constexpr bool kScaled = T == KvDtype::FP8_E4M3 || T == KvDtype::INT8;
  const int64_t bs = kv.block_size, stride = bs * kv.elem_bytes;
  for (int64_t j = 0; j < n;) {
    const BlockId block = table[size_t((begin + j) / bs)];
    const int64_t slot = (begin + j) % bs, count = std::min(n - j, bs - slot);
    const uint8_t* key = kv.key_head(block, 0) + slot * kv.elem_bytes;
    for (int64_t d = 0; d < width; ++d) {
      float* out = keys + d * n + j;
      decode_run<T>(key + d * stride, count, out, lookup);
      if constexpr (kScaled)
        for (int64_t k = 0; k < count; ++k) out[k] = out[k] * kv.key_scales(block, slot + k)[0];
      // The run's rows stay in L1 while d advances, and `out` was just written.
      for (int64_t k = 0; k < count; ++k) rows[(j + k) * width + d] = out[k];
    }
    j += count;
  }
}

void decode_tile(const KvLayerView& kv, std::span<const BlockId> table, int64_t begin, int64_t n, int64_t width,
                 float* rows, float* keys) {
  switch (kv.dtype) {
    case KvDtype::F16: return decode_tile_rows<KvDtype::F16>(kv, table, begin, n, width, rows, keys);
    case KvDtype::BF16: return decode_tile_rows<KvDtype::BF16>(kv, table, begin, n, width, rows, keys);
    case KvDtype::FP8_E4M3: return decode_tile_rows<KvDtype::FP8_E4M3>(kv, table, begin, n, width, rows, keys);
    case KvDtype::INT8: return decode_tile_rows<KvDtype::INT8>(kv, table, begin, n, width, rows, keys);
  }
}

// Tokens i = 0..n_tokens-1 (queries at q + i * q_stride, (n_heads, width) each, at positions[i],
// increasing) over tile `tile`: token i's partial at partials + i * partial_stride.
void latent_tile_queries_body(const ref::LatentAttentionArgs& args, const float* q, int64_t q_stride,
                              const int32_t* positions, int64_t n_tokens, int64_t tile, const KvLayerView& kv,
                              std::span<const BlockId> table, float* scratch, float* partials, int64_t partial_stride) {
#if defined(__AVX512F__)
  if (n_tokens == 1 && latent_tile_one_fits(kv))  // a decode step: straight from the stored blocks
    return latent_tile_one_f16(args, q, positions[0], tile, kv, table, scratch, partials);
#endif
  const int64_t width = args.width(), latent = args.latent_dim;
  const int64_t begin = tile * kAttentionTile;
  const int64_t n = std::min<int64_t>(int64_t(positions[n_tokens - 1]) + 1, begin + kAttentionTile) - begin;
  const bool round_q = kv.dtype == KvDtype::F16;
  const bool round_p = kv.dtype == KvDtype::F16 || kv.dtype == KvDtype::BF16;  // an f16/bf16 kernel's P @ V
  float* rows = scratch;                                   // (n, width)
  float* keys = rows + kAttentionTile * width;             // (width, n)
  float* scores = keys + kAttentionTile * width;           // (n_heads, n)
  float* q_head = scores + kAttentionTile * args.n_heads;  // (width)
  decode_tile(kv, table, begin, n, width, rows, keys);
  for (int64_t i = 0; i < n_tokens; ++i) {
    const int64_t n_i = std::min<int64_t>(int64_t(positions[i]) + 1, begin + kAttentionTile) - begin;
    if (n_i <= 0) continue;  // the tile starts after this token (the caller skips it)
    const float* qi = q + i * q_stride;
    float* partial = partials + i * partial_stride;
    for (int64_t h = 0; h < args.n_heads; ++h, partial += latent + 2) {
      for (int64_t d = 0; d < width; ++d) q_head[d] = round_q ? round_to_f16(qi[h * width + d]) : qi[h * width + d];
      float* s = scores + h * n;
      weighted_rows(q_head, width, keys, n, n_i, s);  // s[j] = Σ_d q[d] k[d][j]
      float max_score = -INFINITY;
      for (int64_t j = 0; j < n_i; ++j) max_score = std::max(max_score, s[j] *= args.scale);
      double sum = 0.0;  // in double, as the ordinary attention tiles
      for (int64_t j = 0; j < n_i; ++j) sum += double(s[j] = std::exp(s[j] - max_score));
      float* out = partial + 2;
      for (int64_t j = 0; j < n_i; ++j) s[j] = round_p ? round_to_f16(s[j]) : s[j];
      weighted_rows(s, n_i, rows, width, latent, out);  // out[d] = Σ_j p[j] row[j][d]
      partial[0] = max_score;
      partial[1] = float(sum);
    }
  }
}

}  // namespace
}  // namespace ridge::cpu
