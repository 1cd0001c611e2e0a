// Packed Q4_K and Q5_K against 1..8 tokens at a time (AVX-512 VNNI): each group of a tile is
// unpacked once into eight registers of four values per row (packed_q4k.h) and dotted with every
// token of the pass; lane n of every accumulator is row n, so no reductions. Bit-identical to the
// scalar reference: sc · Σ and m · Σa are below 2^24, so float products give the exact integers
// before the one rounding fma of each chain.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/packed_vnni_common.h"
#include "kernels/cpu/packed_q4k.h"

namespace ridge::cpu::q4k_packed {
namespace {

using packed_vnni::broadcast_dword;
using packed_vnni::kPrefetchBytes;
using packed_vnni::kTokenChunk;

constexpr int kMaxPass = 8;           // tokens dotted per unpacked group (registers: 8 + 4 + 2 NT + temporaries)


inline __m512i load_bytes(__mmask16 lane_mask, const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(lane_mask, p));
}

// One group (sub-block) of a tile of rows as VNNI operands, and its scale and minimum per row as floats.
template <bool Five>
struct Group {
  __m512i chunk[8];
  __m512 sc, m;

  Group(const uint8_t* group, const uint8_t* scales, int g, int64_t lanes, __mmask16 lane_mask, __mmask64 chunk_mask) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    if constexpr (Five) {
      const __m512i bit4 = _mm512_set1_epi8(0x10);
      const __m512i high = _mm512_maskz_loadu_epi8(chunk_mask, group + 16 * lanes);
      for (int j = 0; j < 4; ++j) {
        const __m512i pair = _mm512_maskz_loadu_epi8(chunk_mask, group + j * 4 * lanes);
        const __m512i lo = _mm512_and_si512(pair, low4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(pair, 4), low4);
        for (int e = 0; e < 2; ++e) {
          const int c = 2 * j + e;
          // Bit c to bit 4 (16-bit shifts: what crosses a byte lands outside the mask).
          const __m512i moved = c < 4 ? _mm512_slli_epi16(high, 4 - c) : c == 4 ? high : _mm512_srli_epi16(high, c - 4);
          chunk[c] = _mm512_ternarylogic_epi32(e ? hi : lo, moved, bit4, 0xf8);  // A | (B & C)
        }
      }
    } else {
      // High nibbles stay in place (16 q): their chain is divided by 16 exactly at the end.
      const __m512i high4 = _mm512_set1_epi8(char(0xf0));
      for (int j = 0; j < 4; ++j) {
        const __m512i pair = _mm512_maskz_loadu_epi8(chunk_mask, group + j * 4 * lanes);
        chunk[2 * j] = _mm512_and_si512(pair, low4);
        chunk[2 * j + 1] = _mm512_and_si512(pair, high4);
      }
    }
    // GGUF's 6-bit scale and minimum of sub-block g (ref::unpack_scale_min_k4), sixteen rows at once.
    const __m512i six = _mm512_set1_epi32(63), four = _mm512_set1_epi32(15);
    __m512i s, mn;
    if (g < 4) {
      s = _mm512_and_si512(load_bytes(lane_mask, scales + g * lanes), six);
      mn = _mm512_and_si512(load_bytes(lane_mask, scales + (g + 4) * lanes), six);
    } else {
      const __m512i b = load_bytes(lane_mask, scales + (g + 4) * lanes);
      const __m512i top_s = _mm512_slli_epi32(_mm512_srli_epi32(load_bytes(lane_mask, scales + (g - 4) * lanes), 6), 4);
      const __m512i top_m = _mm512_slli_epi32(_mm512_srli_epi32(load_bytes(lane_mask, scales + g * lanes), 6), 4);
      s = _mm512_or_si512(_mm512_and_si512(b, four), top_s);
      mn = _mm512_or_si512(_mm512_srli_epi32(b, 4), top_m);
    }
    sc = _mm512_cvtepi32_ps(s);
    m = _mm512_cvtepi32_ps(mn);
  }

  // Σ q·a for every lane, exact (two chains so the dot products overlap).
  inline __m512i dot(const int8_t* q) const {
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    for (int c = 0; c < 8; c += 2) {
      even = _mm512_dpbusd_epi32(even, chunk[c], broadcast_dword(q + 4 * c));
      odd = _mm512_dpbusd_epi32(odd, chunk[c + 1], broadcast_dword(q + 4 * c + 4));
    }
    return _mm512_add_epi32(even, Five ? odd : _mm512_srai_epi32(odd, 4));
  }
};

// Tokens t0 .. t0 + NT - 1 against the tile of `lanes` rows at row `first`. sums: Σq of every
// token's activation blocks, as floats.
template <bool Five, int NT>
void pass(const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const float* sums, bool prefetch) {
  constexpr DType kType = Five ? DType::Q5_K : DType::Q4_K;
  const int64_t n_blocks = task.n_blocks, n_super = n_blocks / 8;
  const int64_t row_super = super_bytes(kType), group = group_bytes(kType);
  const uint8_t* tile = task.w + first * n_super * row_super;
  const int64_t tile_super = lanes * row_super;
  const __mmask16 lane_mask = __mmask16((1u << lanes) - 1);
  const __mmask64 chunk_mask = lanes == 16 ? ~__mmask64(0) : (__mmask64(1) << (4 * lanes)) - 1;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  sums += t0 * n_blocks;
  __m512 acc[NT], acc_min[NT];
  for (int t = 0; t < NT; ++t) acc[t] = acc_min[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < n_super; ++s) {
    const uint8_t* sb = tile + s * tile_super;
    if (prefetch)  // the first pass over the tile (packed_dot_avx512vnni.cc: 4x from DRAM at 8 tokens)
      for (int64_t off = 0; off < tile_super; off += 64) _mm_prefetch(reinterpret_cast<const char*>(sb + kPrefetchBytes + off), _MM_HINT_T0);
    const __m512 d = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lane_mask, sb));
    const __m512 dmin = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lane_mask, sb + 2 * lanes));
    for (int g = 0; g < 8; ++g) {
      const Group<Five> w(sb + kHeaderPerLane * lanes + g * group * lanes, sb + 4 * lanes, g, lanes, lane_mask, chunk_mask);
      const int64_t b = s * 8 + g;
      for (int t = 0; t < NT; ++t) {
        const ActBlock& a = acts[t * n_blocks + b];
        const __m512 ad = _mm512_set1_ps(a.d);
        const __m512 i = _mm512_mul_ps(_mm512_cvtepi32_ps(w.dot(a.q)), w.sc);
        acc[t] = _mm512_fmadd_ps(i, _mm512_mul_ps(d, ad), acc[t]);
        const __m512 mins = _mm512_mul_ps(w.m, _mm512_set1_ps(sums[t * n_blocks + b]));
        acc_min[t] = _mm512_fnmadd_ps(mins, _mm512_mul_ps(dmin, ad), acc_min[t]);
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first;
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * task.y_stride, lane_mask, _mm512_add_ps(acc[t], acc_min[t]));
}

template <bool Five, int... N>
void pass_of(int nt, const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const float* sums,
             bool prefetch, std::integer_sequence<int, N...>) {
  ((nt == N + 1 ? pass<Five, N + 1>(task, first, lanes, t0, sums, prefetch) : void()), ...);
}

template <bool Five>
void run(const PackedDotTask& task) {
  thread_local std::vector<float> sums;
  sums.resize(size_t(task.n_tokens * task.n_blocks));
  for (int64_t tb = 0; tb < task.n_tokens * task.n_blocks; ++tb) sums[size_t(tb)] = float(task.acts[tb].sum);
  for_each_balanced_pass(task.row_begin, task.row_end, task.rows, task.n_tokens, kTokenChunk, kMaxPass,
                         [&](int64_t first, int64_t lanes, int64_t t, int64_t nt, bool first_pass) {
                           pass_of<Five>(int(nt), task, first, lanes, t, sums.data(), first_pass,
                                         std::make_integer_sequence<int, kMaxPass>{});
                         });
}

}  // namespace

void dot_avx512vnni(const PackedDotTask& task) {
  if (task.type == DType::Q5_K) return run<true>(task);
  run<false>(task);
}

}  // namespace ridge::cpu::q4k_packed
