// Packed Q6_K against 1..12 tokens at a time (AVX-512 VNNI): each group of a tile is unpacked once
// into eight registers of four 6-bit values per row (packed_q6k.h) and dotted with every token of
// the pass; lane n of every accumulator is row n, so no reductions. Bit-identical to the scalar
// reference: the products sc · Σ are below 2^23 and their sum below 2^24, so float arithmetic gives
// the exact integer I before the one rounding fma of the reference.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/packed_vnni_common.h"
#include "kernels/cpu/packed_q6k.h"

namespace ridge::cpu::q6k_packed {
namespace {

using packed_vnni::broadcast_dword;
using packed_vnni::kPrefetchBytes;
using packed_vnni::kTokenChunk;

constexpr int kMaxPass = 12;          // tokens dotted per unpacked group (registers: 8 + 3 + NT + temporaries)


// One group of a tile of rows as VNNI operands, and its two scales per row as floats.
struct Group {
  __m512i chunk[8];
  __m512 sc_lo, sc_hi;

  Group(const uint8_t* group, const uint8_t* scales, int64_t lanes, __mmask16 lane_mask, __mmask64 chunk_mask) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    __m512i high[2];
    for (int h = 0; h < 2; ++h) high[h] = _mm512_maskz_loadu_epi8(chunk_mask, group + 16 * lanes + h * 4 * lanes);
    for (int j = 0; j < 4; ++j) {
      const __m512i pair = _mm512_maskz_loadu_epi8(chunk_mask, group + j * 4 * lanes);
      const __m512i lo = _mm512_and_si512(pair, low4);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(pair, 4), low4);
      for (int e = 0; e < 2; ++e) {
        const int c = 2 * j + e, k = c % 4;
        const __m512i h = high[c / 4];
        // Bits 2k, 2k+1 to 4, 5 (16-bit shifts: what crosses a byte lands outside the mask).
        const __m512i moved = k == 0 ? _mm512_slli_epi16(h, 4) : k == 1 ? _mm512_slli_epi16(h, 2) : k == 2 ? h : _mm512_srli_epi16(h, 2);
        chunk[c] = _mm512_ternarylogic_epi32(e ? hi : lo, moved, bits45, 0xf8);  // A | (B & C)
      }
    }
    sc_lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lane_mask, scales)));
    sc_hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lane_mask, scales + lanes)));
  }
};

// Tokens t0 .. t0 + NT - 1 against the tile of `lanes` rows at row `first`. offsets: per token and
// block, -32 times the sums of the activation block's two halves (the values' -32, through a).
template <int NT>
void pass(const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const int32_t* offsets, bool prefetch) {
  const int64_t n_blocks = task.n_blocks, n_super = n_blocks / 8;
  const uint8_t* tile = task.w + first * n_super * kSuperBytes;
  const int64_t super_bytes = lanes * kSuperBytes;
  const __mmask16 lane_mask = __mmask16((1u << lanes) - 1);
  const __mmask64 chunk_mask = lanes == 16 ? ~__mmask64(0) : (__mmask64(1) << (4 * lanes)) - 1;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  offsets += t0 * n_blocks * 2;
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < n_super; ++s) {
    const uint8_t* sb = tile + s * super_bytes;
    if (prefetch)  // the first pass over the tile (packed_dot_avx512vnni.cc: 4x from DRAM at 8 tokens)
      for (int64_t off = 0; off < super_bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(sb + kPrefetchBytes + off), _MM_HINT_T0);
    const __m512 d = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lane_mask, sb));
    for (int g = 0; g < 8; ++g) {
      const Group w(sb + kHeaderPerLane * lanes + g * kGroupPerLane * lanes, sb + 2 * lanes + 2 * g * lanes, lanes,
                    lane_mask, chunk_mask);
      const int64_t b = s * 8 + g;
      for (int t = 0; t < NT; ++t) {
        const ActBlock& a = acts[t * n_blocks + b];
        const int32_t* off = offsets + (t * n_blocks + b) * 2;
        __m512i lo = _mm512_set1_epi32(off[0]), hi = _mm512_set1_epi32(off[1]);
        for (int c = 0; c < 4; ++c) lo = _mm512_dpbusd_epi32(lo, w.chunk[c], broadcast_dword(a.q + 4 * c));
        for (int c = 4; c < 8; ++c) hi = _mm512_dpbusd_epi32(hi, w.chunk[c], broadcast_dword(a.q + 4 * c));
        const __m512 i = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), w.sc_lo, _mm512_mul_ps(_mm512_cvtepi32_ps(hi), w.sc_hi));
        acc[t] = _mm512_fmadd_ps(i, _mm512_mul_ps(d, _mm512_set1_ps(a.d)), acc[t]);
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first;
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * task.y_stride, lane_mask, acc[t]);
}

template <int... N>
void pass_of(int nt, const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const int32_t* offsets,
             bool prefetch, std::integer_sequence<int, N...>) {
  ((nt == N + 1 ? pass<N + 1>(task, first, lanes, t0, offsets, prefetch) : void()), ...);
}

}  // namespace

void dot_avx512vnni(const PackedDotTask& task) {
  const int64_t n_blocks = task.n_blocks;
  thread_local std::vector<int32_t> offsets;
  offsets.resize(size_t(task.n_tokens * n_blocks * 2));
  for (int64_t tb = 0; tb < task.n_tokens * n_blocks; ++tb) {
    int32_t lo, hi;
    half_sums(task.acts[tb], lo, hi);
    offsets[size_t(2 * tb)] = -32 * lo;
    offsets[size_t(2 * tb + 1)] = -32 * hi;
  }
  for_each_balanced_pass(task.row_begin, task.row_end, task.rows, task.n_tokens, kTokenChunk, kMaxPass,
                         [&](int64_t first, int64_t lanes, int64_t t, int64_t nt, bool first_pass) {
                           pass_of(int(nt), task, first, lanes, t, offsets.data(), first_pass,
                                   std::make_integer_sequence<int, kMaxPass>{});
                         });
}

}  // namespace ridge::cpu::q6k_packed
