// The packed-layout integer dot kernels (AVX-512 VNNI): a register holds four values of one block
// for sixteen rows, so eight vpdpbusd against dword-broadcast activations leave each lane with its
// row's exact block sum; the block's scales then enter as one multiply-add per sixteen rows.
// The weights are unpacked once per block and dotted with up to eight tokens. Every (row, token)
// pair follows the arithmetic of packed_layout.h whatever the tile, so results never depend on
// the batch.
#include <immintrin.h>

// GCC 12 warns about the deliberately undefined upper lanes inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/packed_layout.h"
#include "kernels/cpu/packed_vnni_common.h"
#include "kernels/cpu/packed_fp4.h"
#include "kernels/cpu/packed_q4k.h"
#include "kernels/cpu/packed_q6k.h"

namespace ridge::cpu {
namespace {

using packed_vnni::broadcast_dword;
using packed_vnni::kPrefetchBytes;
using packed_vnni::kTokenChunk;

// The integer offset that turns Σ stored·a into Σ w·a: Q4_0 stores q (w = q - 8), Q8_0 w + 128.
template <DType T>
inline int32_t offset_of(const ActBlock& a) {
  if constexpr (T == DType::Q4_0) return -8 * a.sum;
  if constexpr (T == DType::Q8_0) return -128 * a.sum;
  return 0;
}


// One block of a tile of `lanes` rows unpacked to eight registers of four values per row.
template <DType T, bool Full>
struct BlockWeights {
  __m512i w[8];
  __m512 d, m;

  BlockWeights(const uint8_t* p, int64_t lanes) {
    const __mmask16 lane_mask = Full ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
    const __mmask64 chunk_mask = Full ? ~__mmask64(0) : (__mmask64(1) << (4 * lanes)) - 1;
    d = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lane_mask, p));
    if constexpr (T == DType::Q4_1) m = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lane_mask, p + 2 * lanes));
    const uint8_t* q = p + PackedGeometry<T>::header * lanes;
    if constexpr (T == DType::Q8_0) {
      for (int c = 0; c < 8; ++c) w[c] = _mm512_maskz_loadu_epi8(chunk_mask, q + c * 4 * lanes);
    } else {
      // High nibbles stay in place (16 q): their dot is 16 x the sum, divided exactly at the end,
      // which saves a shift per register on a path that is short of vector ports.
      const __m512i low4 = _mm512_set1_epi8(0x0f), high4 = _mm512_set1_epi8(char(0xf0));
      for (int c = 0; c < 4; ++c) {
        const __m512i raw = _mm512_maskz_loadu_epi8(chunk_mask, q + c * 4 * lanes);
        w[2 * c] = _mm512_and_si512(raw, low4);
        w[2 * c + 1] = _mm512_and_si512(raw, high4);
      }
    }
  }

  // Σ w·a for every lane, exact (two chains so the dot products overlap).
  inline __m512i dot(const ActBlock& a) const {
    __m512i even = _mm512_set1_epi32(offset_of<T>(a)), odd = _mm512_setzero_si512();
    for (int j = 0; j < 8; j += 2) {
      even = _mm512_dpbusd_epi32(even, w[j], broadcast_dword(a.q + 4 * j));
      odd = _mm512_dpbusd_epi32(odd, w[j + 1], broadcast_dword(a.q + 4 * j + 4));
    }
    if constexpr (T == DType::Q8_0) return _mm512_add_epi32(even, odd);
    return _mm512_add_epi32(even, _mm512_srai_epi32(odd, 4));
  }

  inline __m512 accumulate(const ActBlock& a, __m512 acc) const {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot(a)), _mm512_mul_ps(d, _mm512_set1_ps(a.d)), acc);
    if constexpr (T == DType::Q4_1) acc = _mm512_fmadd_ps(m, _mm512_set1_ps(a.s), acc);
    return acc;
  }
};

// The kernel streams weights from memory faster than the out-of-order window alone would request
// them: the first pass over a tile fetches the lines 2 KiB ahead (tiles of a thread are contiguous;
// measured on the 1.1B files at 2 threads: 512 B to 4 KiB tried, 2 KiB best). Later passes find the
// tile in cache. Without it, 8 tokens against a matrix in DRAM ran at 15 GB/s instead of 30
// (Zen 5, 2 threads): the hardware prefetcher alone does not keep up once compute is in the loop.
inline void prefetch_ahead(const uint8_t* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + off), _MM_HINT_T0);
}

// Tokens t0 .. t0 + NT - 1 against the tile of `lanes` rows that starts at row `first`.
template <DType T, int NT, bool Full>
void tile(const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, bool prefetch) {
  const int64_t n_blocks = task.n_blocks;
  const uint8_t* tile_bytes = task.w + first * n_blocks * PackedGeometry<T>::block_bytes;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  float* y = task.y + t0 * task.y_stride + first;
  const int64_t y_stride = task.y_stride;
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  const int64_t block_bytes = lanes * PackedGeometry<T>::block_bytes;
  for (int64_t b = 0; b < n_blocks; ++b) {
    if (prefetch) prefetch_ahead(tile_bytes + b * block_bytes, block_bytes);
    const BlockWeights<T, Full> w(tile_bytes + b * block_bytes, lanes);
    for (int t = 0; t < NT; ++t) acc[t] = w.accumulate(acts[t * n_blocks + b], acc[t]);
  }
  const __mmask16 lane_mask = Full ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * y_stride, lane_mask, acc[t]);
}

// Up to 12 tokens per unpacked block (registers: 8 weights + 2 scales + NT accumulators +
// temporaries), in balanced passes: 9 tokens are one pass of 9, 13 are 7 + 6 (not 8 + 4 + 1, whose
// one-token pass unpacked every block again for a single dot).
constexpr int kMaxPass = 12;

template <DType T, int... N>
void tile_of(int nt, const PackedDotTask& task, int64_t first, int64_t t0, bool prefetch, std::integer_sequence<int, N...>) {
  ((nt == N + 1 ? tile<T, N + 1, true>(task, first, kTileRows, t0, prefetch) : void()), ...);
}

template <DType T>
void run(const PackedDotTask& task) {
  for (int64_t c0 = 0; c0 < task.n_tokens; c0 += kTokenChunk) {
    const int64_t c_end = std::min(task.n_tokens, c0 + kTokenChunk), c_n = c_end - c0;
    const int64_t passes = (c_n + kMaxPass - 1) / kMaxPass;
    for (int64_t first = task.row_begin; first < task.row_end; first += kTileRows) {
      const int64_t lanes = std::min(kTileRows, task.rows - first);
      if (lanes < kTileRows) {
        for (int64_t t = c0; t < c_end; ++t) tile<T, 1, false>(task, first, lanes, t, t == c0);
        continue;
      }
      for (int64_t p = 0, t = c0; p < passes; ++p) {
        const int64_t nt = (c_end - t + (passes - p) - 1) / (passes - p);
        tile_of<T>(int(nt), task, first, t, p == 0, std::make_integer_sequence<int, kMaxPass>{});
        t += nt;
      }
    }
  }
}

}  // namespace

void packed_dot_avx512vnni(const PackedDotTask& task) {
  switch (task.type) {
    case DType::Q4_0: return run<DType::Q4_0>(task);
    case DType::Q4_1: return run<DType::Q4_1>(task);
    case DType::Q8_0: return run<DType::Q8_0>(task);
    case DType::Q6_K: return q6k_packed::dot_avx512vnni(task);
    case DType::Q4_K: case DType::Q5_K: return q4k_packed::dot_avx512vnni(task);
    case DType::MXFP4: case DType::NVFP4: return fp4_packed::dot_avx512vnni(task);
    default: break;
  }
}

}  // namespace ridge::cpu
