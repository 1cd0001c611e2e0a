#pragma once
// Body of the packed-layout kernels on 256-bit registers (AVX2, AVX-VNNI), included once per ISA
// translation unit with
//   RIDGE_P256_FN    the function to define (packed_dot_avx2, packed_dot_avxvnni)
//   RIDGE_P256_NS    a namespace private to that unit
//   RIDGE_P256_VNNI  1: vpdpbusd; 0: vpmaddubsw into int16 lanes, as many terms as cannot saturate,
//                    then one vpmaddwd per run of them
// The layouts are the AVX-512 kernels' (packed_layout.h, packed_q4k.h, packed_q6k.h): a full tile of
// sixteen rows stores each chunk as 64 bytes, rows 0-7 in the first 32 and rows 8-15 in the next,
// so a 256-bit register holds four values of one block for eight rows, a dword-broadcast activation
// dots all eight at once, and lane n ends a block with row n's exact integer sum. A tile is done as
// two halves of eight rows; the one partial tile a matrix may end with is repacked as a full one.
// Every (row, token) follows the scalar reference's arithmetic bit for bit, whatever the batch.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/packed_layout.h"
#include "kernels/cpu/packed_q4k.h"
#include "kernels/cpu/packed_q6k.h"

namespace ridge::cpu {
namespace RIDGE_P256_NS {

constexpr int64_t kTokenChunk = 64;       // activations of a chunk stay in L2 while the tiles stream by
constexpr int64_t kPrefetchBytes = 2048;  // packed_dot_avx512vnni.cc: how far ahead the first pass fetches
constexpr int kMaxPass = 6;               // tokens per decoded group (1.1B AVX2 class pp512: 4 -> 6 gave Q4_K +7-11%, Q4_0 +4-8%)

inline __m256i broadcast_dword(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
inline __m256i load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256 load_f16x8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline __m256i load_u8x8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline void prefetch(const uint8_t* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + off), _MM_HINT_T0);
}

// Σ_c w[c] · q[4c .. 4c+3] for c < N, per lane, exact, for unsigned weight bytes of at most Max.
template <int N, int Max>
inline __m256i dot_chunks(const __m256i* w, const int8_t* q) {
#if RIDGE_P256_VNNI
  __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
  for (int c = 0; c < N; c += 2) {
    even = _mm256_dpbusd_avx_epi32(even, w[c], broadcast_dword(q + 4 * c));
    if (c + 1 < N) odd = _mm256_dpbusd_avx_epi32(odd, w[c + 1], broadcast_dword(q + 4 * c + 4));
  }
  return _mm256_add_epi32(even, odd);
#else
  // A vpmaddubsw lane is at most 2 * Max * 127 in magnitude: K of them still fit an int16.
  constexpr int K = 32767 / (2 * Max * 127);
  static_assert(K >= 1);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i total = _mm256_setzero_si256();
  for (int c0 = 0; c0 < N; c0 += K) {
    __m256i s16 = _mm256_maddubs_epi16(w[c0], broadcast_dword(q + 4 * c0));
    for (int c = c0 + 1; c < std::min(N, c0 + K); ++c)
      s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w[c], broadcast_dword(q + 4 * c)));
    total = _mm256_add_epi32(total, _mm256_madd_epi16(s16, ones));
  }
  return total;
#endif
}

// ---- Q4_0, Q4_1, Q8_0 (packed_layout.h) ----

// One block of half h of a full tile: eight registers of four values per row, and the f32 scales.
template <DType T>
struct LegacyBlock {
  __m256i w[8];
#if !RIDGE_P256_VNNI
  __m256i magnitude[8];  // Q8_0 without VNNI: |w| against sign(a, w) (vpmaddubsw pairs below 2^15)
#endif
  __m256 d, m;

  LegacyBlock(const uint8_t* p, int h) {
    constexpr int64_t L = kTileRows;
    d = load_f16x8(p + 16 * h);
    if constexpr (T == DType::Q4_1) m = load_f16x8(p + 2 * L + 16 * h);
    const uint8_t* q = p + PackedGeometry<T>::header * L + 32 * h;
    if constexpr (T == DType::Q8_0) {
      for (int c = 0; c < 8; ++c) {
#if RIDGE_P256_VNNI
        w[c] = load(q + c * 4 * L);  // w + 128, unsigned; the offset leaves through -128 Σa
#else
        w[c] = _mm256_xor_si256(load(q + c * 4 * L), _mm256_set1_epi8(char(0x80)));  // signed w
        magnitude[c] = _mm256_abs_epi8(w[c]);
#endif
      }
    } else {
      const __m256i low4 = _mm256_set1_epi8(0x0f);
      for (int c = 0; c < 4; ++c) {
        const __m256i raw = load(q + c * 4 * L);
        w[2 * c] = _mm256_and_si256(raw, low4);
        w[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
      }
    }
  }

  // Σ w·a per lane, exact.
  inline __m256i dot(const ActBlock& a) const {
    if constexpr (T == DType::Q8_0) {
#if RIDGE_P256_VNNI
      return _mm256_add_epi32(dot_chunks<8, 255>(w, a.q), _mm256_set1_epi32(-128 * a.sum));
#else
      const __m256i ones = _mm256_set1_epi16(1);
      __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
      for (int c = 0; c < 8; c += 2) {
        const __m256i a0 = _mm256_sign_epi8(broadcast_dword(a.q + 4 * c), w[c]);
        const __m256i a1 = _mm256_sign_epi8(broadcast_dword(a.q + 4 * c + 4), w[c + 1]);
        even = _mm256_add_epi32(even, _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude[c], a0), ones));
        odd = _mm256_add_epi32(odd, _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude[c + 1], a1), ones));
      }
      return _mm256_add_epi32(even, odd);
#endif
    }
    const __m256i sum = dot_chunks<8, 15>(w, a.q);
    if constexpr (T == DType::Q4_0) return _mm256_add_epi32(sum, _mm256_set1_epi32(-8 * a.sum));
    return sum;
  }
};

// Tokens t0 .. t0 + NT - 1 against halves h0 .. h0 + H - 1 of the full tile at row `first`. With
// both halves in one pass (decode), every cache line of the tile is used as it arrives; with one
// (prompts), the decoded weights and NT accumulators fit the sixteen registers.
template <DType T, int NT, int H>
void legacy_pass(const PackedDotTask& task, int64_t first, int h0, int64_t t0, bool prefetch_tile) {
  const int64_t n_blocks = task.n_blocks;
  constexpr int64_t kBlockBytes = PackedGeometry<T>::tile_block_bytes;
  const uint8_t* tile = task.w + first * n_blocks * PackedGeometry<T>::block_bytes;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  __m256 acc[H][NT];
  for (auto& half : acc)
    for (auto& a : half) a = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    if (prefetch_tile) prefetch(tile + b * kBlockBytes, kBlockBytes);
    for (int hh = 0; hh < H; ++hh) {
      const LegacyBlock<T> w(tile + b * kBlockBytes, h0 + hh);
      for (int t = 0; t < NT; ++t) {
        const ActBlock& a = acts[t * n_blocks + b];
        acc[hh][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(w.dot(a)), _mm256_mul_ps(w.d, _mm256_set1_ps(a.d)), acc[hh][t]);
        if constexpr (T == DType::Q4_1) acc[hh][t] = _mm256_fmadd_ps(w.m, _mm256_set1_ps(a.s), acc[hh][t]);
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first + 8 * h0;
  for (int hh = 0; hh < H; ++hh)
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(y + t * task.y_stride + 8 * hh, acc[hh][t]);
}

// ---- Q4_K, Q5_K (packed_q4k.h) ----

template <bool Five>
struct Q4kGroup {
  __m256i chunk[8];
  __m256 sc, m;

  // group: the group's bytes; scales: the super-block's 12 x L scale bytes.
  Q4kGroup(const uint8_t* group, const uint8_t* scales, int g, int h) {
    constexpr int64_t L = kTileRows;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i fifth = Five ? load(group + 16 * L + 32 * h) : _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i pair = load(group + j * 4 * L + 32 * h);
      chunk[2 * j] = _mm256_and_si256(pair, low4);
      chunk[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(pair, 4), low4);
      if constexpr (Five)
        for (int e = 0; e < 2; ++e) {
          const int c = 2 * j + e;  // bit c of the fifth-bit bytes to bit 4 (what crosses a byte is masked off)
          const __m256i moved = c < 4 ? _mm256_slli_epi16(fifth, 4 - c) : c == 4 ? fifth : _mm256_srli_epi16(fifth, c - 4);
          chunk[c] = _mm256_or_si256(chunk[c], _mm256_and_si256(moved, _mm256_set1_epi8(0x10)));
        }
    }
    // GGUF's 6-bit scale and minimum of sub-block g (ref::unpack_scale_min_k4), eight rows at once.
    const uint8_t* s8 = scales + 8 * h;
    __m256i s, mn;
    if (g < 4) {
      s = _mm256_and_si256(load_u8x8(s8 + g * L), _mm256_set1_epi32(63));
      mn = _mm256_and_si256(load_u8x8(s8 + (g + 4) * L), _mm256_set1_epi32(63));
    } else {
      const __m256i b = load_u8x8(s8 + (g + 4) * L);
      const __m256i top_s = _mm256_slli_epi32(_mm256_srli_epi32(load_u8x8(s8 + (g - 4) * L), 6), 4);
      const __m256i top_m = _mm256_slli_epi32(_mm256_srli_epi32(load_u8x8(s8 + g * L), 6), 4);
      s = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(15)), top_s);
      mn = _mm256_or_si256(_mm256_srli_epi32(b, 4), top_m);
    }
    sc = _mm256_cvtepi32_ps(s);
    m = _mm256_cvtepi32_ps(mn);
  }
};

// sums: Σq of every token's activation blocks, as floats. Halves as legacy_pass.
template <bool Five, int NT, int H>
void q4k_pass(const PackedDotTask& task, int64_t first, int h0, int64_t t0, const float* sums, bool prefetch_tile) {
  constexpr DType kType = Five ? DType::Q5_K : DType::Q4_K;
  constexpr int64_t L = kTileRows;
  const int64_t n_blocks = task.n_blocks, n_super = n_blocks / 8;
  const int64_t row_super = q4k_packed::super_bytes(kType), group = q4k_packed::group_bytes(kType);
  const uint8_t* tile = task.w + first * n_super * row_super;
  const int64_t tile_super = L * row_super;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  sums += t0 * n_blocks;
  __m256 acc[H][NT], acc_min[H][NT];
  for (int hh = 0; hh < H; ++hh)
    for (int t = 0; t < NT; ++t) acc[hh][t] = acc_min[hh][t] = _mm256_setzero_ps();
  for (int64_t s = 0; s < n_super; ++s) {
    const uint8_t* sb = tile + s * tile_super;
    if (prefetch_tile) prefetch(sb, tile_super);
    for (int g = 0; g < 8; ++g) {
      const int64_t b = s * 8 + g;
      for (int hh = 0; hh < H; ++hh) {
        const int h = h0 + hh;
        const __m256 d = load_f16x8(sb + 16 * h), dmin = load_f16x8(sb + 2 * L + 16 * h);
        const Q4kGroup<Five> w(sb + q4k_packed::kHeaderPerLane * L + g * group * L, sb + 4 * L, g, h);
        for (int t = 0; t < NT; ++t) {
          const ActBlock& a = acts[t * n_blocks + b];
          const __m256 ad = _mm256_set1_ps(a.d);
          const __m256 i = _mm256_mul_ps(_mm256_cvtepi32_ps(dot_chunks<8, Five ? 31 : 15>(w.chunk, a.q)), w.sc);
          acc[hh][t] = _mm256_fmadd_ps(i, _mm256_mul_ps(d, ad), acc[hh][t]);
          const __m256 mins = _mm256_mul_ps(w.m, _mm256_set1_ps(sums[t * n_blocks + b]));
          acc_min[hh][t] = _mm256_fnmadd_ps(mins, _mm256_mul_ps(dmin, ad), acc_min[hh][t]);
        }
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first + 8 * h0;
  for (int hh = 0; hh < H; ++hh)
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(y + t * task.y_stride + 8 * hh, _mm256_add_ps(acc[hh][t], acc_min[hh][t]));
}

// ---- Q6_K (packed_q6k.h) ----

struct Q6kGroup {
  __m256i chunk[8];
  __m256 sc_lo, sc_hi;

  Q6kGroup(const uint8_t* group, const uint8_t* scales, int h) {
    constexpr int64_t L = kTileRows;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    const __m256i high[2] = {load(group + 16 * L + 32 * h), load(group + 20 * L + 32 * h)};
    for (int j = 0; j < 4; ++j) {
      const __m256i pair = load(group + j * 4 * L + 32 * h);
      for (int e = 0; e < 2; ++e) {
        const int c = 2 * j + e, k = c % 4;
        const __m256i nibble = _mm256_and_si256(e ? _mm256_srli_epi16(pair, 4) : pair, low4);
        const __m256i hb = high[c / 4];
        // Bits 2k, 2k+1 to 4, 5 (16-bit shifts: what crosses a byte lands outside the mask).
        const __m256i moved = k == 0 ? _mm256_slli_epi16(hb, 4) : k == 1 ? _mm256_slli_epi16(hb, 2) : k == 2 ? hb : _mm256_srli_epi16(hb, 2);
        chunk[c] = _mm256_or_si256(nibble, _mm256_and_si256(moved, bits45));
      }
    }
    sc_lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8 * h))));
    sc_hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + L + 8 * h))));
  }
};

// offsets: per token and block, -32 times the sums of the activation block's two halves. Halves as
// legacy_pass.
template <int NT, int H>
void q6k_pass(const PackedDotTask& task, int64_t first, int h0, int64_t t0, const int32_t* offsets, bool prefetch_tile) {
  constexpr int64_t L = kTileRows;
  using q6k_packed::kGroupPerLane;
  using q6k_packed::kHeaderPerLane;
  const int64_t n_blocks = task.n_blocks, n_super = n_blocks / 8;
  const uint8_t* tile = task.w + first * n_super * q6k_packed::kSuperBytes;
  const int64_t tile_super = L * q6k_packed::kSuperBytes;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  offsets += t0 * n_blocks * 2;
  __m256 acc[H][NT];
  for (auto& half : acc)
    for (auto& a : half) a = _mm256_setzero_ps();
  for (int64_t s = 0; s < n_super; ++s) {
    const uint8_t* sb = tile + s * tile_super;
    if (prefetch_tile) prefetch(sb, tile_super);
    for (int g = 0; g < 8; ++g) {
      const int64_t b = s * 8 + g;
      for (int hh = 0; hh < H; ++hh) {
        const int h = h0 + hh;
        const __m256 d = load_f16x8(sb + 16 * h);
        const Q6kGroup w(sb + kHeaderPerLane * L + g * kGroupPerLane * L, sb + 2 * L + 2 * g * L, h);
        for (int t = 0; t < NT; ++t) {
          const ActBlock& a = acts[t * n_blocks + b];
          const int32_t* off = offsets + (t * n_blocks + b) * 2;
          const __m256i lo = _mm256_add_epi32(dot_chunks<4, 63>(w.chunk, a.q), _mm256_set1_epi32(off[0]));
          const __m256i hi = _mm256_add_epi32(dot_chunks<4, 63>(w.chunk + 4, a.q + 16), _mm256_set1_epi32(off[1]));
          const __m256 i = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo), w.sc_lo, _mm256_mul_ps(_mm256_cvtepi32_ps(hi), w.sc_hi));
          acc[hh][t] = _mm256_fmadd_ps(i, _mm256_mul_ps(d, _mm256_set1_ps(a.d)), acc[hh][t]);
        }
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first + 8 * h0;
  for (int hh = 0; hh < H; ++hh)
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(y + t * task.y_stride + 8 * hh, acc[hh][t]);
}

// ---- the walk ----

// Passes of up to this many tokens take both halves of a tile at once (see legacy_pass).
constexpr int kBothHalvesMax = 2;

// The tile's two halves for tokens t0 .. t0 + nt - 1: pass(task, NT, H, first, h0, t0, prefetch)
// once with H = 2, or twice with H = 1 (the first pass brings the whole tile in).
template <class Pass, int... N>
void pass_of(int nt, const Pass& pass, const PackedDotTask& task, int64_t first, int64_t t0, bool prefetch_tile,
             std::integer_sequence<int, N...>) {
  auto one = [&](auto n) {
    if constexpr (decltype(n)::value <= kBothHalvesMax) {
      pass(task, n, std::integral_constant<int, 2>{}, first, 0, t0, prefetch_tile);
    } else {
      pass(task, n, std::integral_constant<int, 1>{}, first, 0, t0, prefetch_tile);
      pass(task, n, std::integral_constant<int, 1>{}, first, 1, t0, false);
    }
  };
  ((nt == N + 1 ? one(std::integral_constant<int, N + 1>{}) : void()), ...);
}

// The matrix's last rows when they are not a whole tile (real models' dimensions are multiples of
// sixteen): for three tokens or more, repacked once per call as a full tile of sixteen rows (zero
// rows after them) that the same passes read, the results coming out of a buffer of sixteen per
// token; for one or two, the scalar reference. The same arithmetic, so the same bits either way.
struct PartialTile {
  std::vector<uint8_t> rows;  // the padded tile
  std::vector<float> y;       // (tokens, 16)
  int64_t first = -1;
};

template <class Pass>
void partial_tile(const PackedDotTask& task, const Pass& pass, PartialTile& part, int64_t first, int64_t lanes, int64_t t,
                  int64_t nt) {
  const int64_t cols = task.n_blocks * kActBlock, row_bytes = dtype_row_bytes(task.type, cols);
  if (part.first != first) {
    part.rows.assign(size_t(kTileRows * row_bytes), 0);
    for (int64_t r = 0; r < lanes; ++r) unpack_row(task.type, task.w, task.rows, cols, first + r, part.rows.data() + r * row_bytes);
    pack_rows(task.type, part.rows.data(), kTileRows, cols);
    part.y.resize(size_t(task.n_tokens * kTileRows));
    part.first = first;
  }
  PackedDotTask padded = task;
  padded.w = part.rows.data();
  padded.rows = kTileRows;
  padded.y = part.y.data();
  padded.y_stride = kTileRows;
  pass_of(int(nt), pass, padded, 0, t, false, std::make_integer_sequence<int, kMaxPass>{});
  for (int64_t i = t; i < t + nt; ++i)
    std::copy(part.y.data() + i * kTileRows, part.y.data() + i * kTileRows + lanes, task.y + i * task.y_stride + first);
}

template <class Pass>
void walk(const PackedDotTask& task, const Pass& pass) {
  thread_local PartialTile part;
  part.first = -1;
  for_each_balanced_pass(task.row_begin, task.row_end, task.rows, task.n_tokens, kTokenChunk, kMaxPass,
                         [&](int64_t first, int64_t lanes, int64_t t, int64_t nt, bool first_pass) {
                           if (lanes < kTileRows) {
                             if (task.n_tokens > 2) return partial_tile(task, pass, part, first, lanes, t, nt);
                             PackedDotTask rest = task;  // one or two tokens: cheaper than repacking
                             rest.row_begin = first;
                             rest.row_end = first + lanes;
                             return packed_dot_scalar(rest);
                           }
                           pass_of(int(nt), pass, task, first, t, first_pass, std::make_integer_sequence<int, kMaxPass>{});
                         });
}

template <DType T>
void run_legacy(const PackedDotTask& task) {
  walk(task, [](const PackedDotTask& on, auto nt, auto halves, int64_t first, int h0, int64_t t0, bool p) {
    legacy_pass<T, decltype(nt)::value, decltype(halves)::value>(on, first, h0, t0, p);
  });
}

template <bool Five>
void run_q4k(const PackedDotTask& task) {
  thread_local std::vector<float> sums;
  sums.resize(size_t(task.n_tokens * task.n_blocks));
  for (int64_t tb = 0; tb < task.n_tokens * task.n_blocks; ++tb) sums[size_t(tb)] = float(task.acts[tb].sum);
  walk(task, [&](const PackedDotTask& on, auto nt, auto halves, int64_t first, int h0, int64_t t0, bool p) {
    q4k_pass<Five, decltype(nt)::value, decltype(halves)::value>(on, first, h0, t0, sums.data(), p);
  });
}

inline void run_q6k(const PackedDotTask& task) {
  thread_local std::vector<int32_t> offsets;
  offsets.resize(size_t(task.n_tokens * task.n_blocks * 2));
  for (int64_t tb = 0; tb < task.n_tokens * task.n_blocks; ++tb) {
    int32_t lo, hi;
    half_sums(task.acts[tb], lo, hi);
    offsets[size_t(2 * tb)] = -32 * lo;
    offsets[size_t(2 * tb + 1)] = -32 * hi;
  }
  walk(task, [&](const PackedDotTask& on, auto nt, auto halves, int64_t first, int h0, int64_t t0, bool p) {
    q6k_pass<decltype(nt)::value, decltype(halves)::value>(on, first, h0, t0, offsets.data(), p);
  });
}

}  // namespace RIDGE_P256_NS

void RIDGE_P256_FN(const PackedDotTask& task) {
  using namespace RIDGE_P256_NS;
  switch (task.type) {
    case DType::Q4_0: return run_legacy<DType::Q4_0>(task);
    case DType::Q4_1: return run_legacy<DType::Q4_1>(task);
    case DType::Q8_0: return run_legacy<DType::Q8_0>(task);
    case DType::Q4_K: return run_q4k<false>(task);
    case DType::Q5_K: return run_q4k<true>(task);
    case DType::Q6_K: return run_q6k(task);
    default: return packed_dot_scalar(task);  // FP4: packed only where AVX-512 reads it (packed_256_type)
  }
}

}  // namespace ridge::cpu
