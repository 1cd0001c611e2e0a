// Packed MXFP4 / NVFP4 against 1..12 tokens at a time (AVX-512 VNNI): each 32-value block of a tile
// is unpacked once into eight registers of four values per row (a byte shuffle turns codes into
// value + 12, unsigned, for vpdpbusd; the +12 leaves through -12 Σa) and dotted with every token of
// the pass; lane n of every accumulator is row n, so there are no reductions. The block scales are
// decoded to floats with integer arithmetic, exactly the reference's values. Bit-identical to
// fp4_packed::dot_scalar.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/packed_vnni_common.h"
#include "kernels/cpu/packed_fp4.h"
#include "kernels/ref/fp4.h"

namespace ridge::cpu::fp4_packed {
namespace {

using packed_vnni::broadcast_dword;
using packed_vnni::kPrefetchBytes;
using packed_vnni::kTokenChunk;

constexpr int kMaxPass = 12;         // tokens per unpacked block (registers: 8 + 2 + NT + temporaries)
constexpr int32_t kBias = 12;  // value + 12 >= 0 for every E2M1 value (±12 at most)


// 2^(e-128) per lane (ref::e8m0_half), e = 0 and 1 as f32 subnormals.
inline __m512 e8m0_half(__m512i e) {
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i small = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2)), normal, small));
}

// Half of an unsigned E4M3 per lane (ref::ue4m3_half): exponent e > 0 gives the f32 with exponent
// e + 119 and the three mantissa bits on top; e = 0 is m · 2^-10; 0x7f is 0.
inline __m512 ue4m3_half(__m512i x) {
  const __m512i normal = _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x7f)), 20),
                                          _mm512_set1_epi32(119 << 23));
  const __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(x, _mm512_set1_epi32(7))), _mm512_set1_ps(1.0f / 1024));
  const __mmask16 zero_exp = _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x78));
  const __m512 v = _mm512_mask_blend_ps(zero_exp, _mm512_castsi512_ps(normal), sub);
  return _mm512_maskz_mov_ps(_mm512_cmpneq_epi32_mask(x, _mm512_set1_epi32(0x7f)), v);
}

inline __m512i lane_bytes(const uint8_t* p, __mmask16 lane_mask) { return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(lane_mask, p)); }

// 32 values of a tile's rows (4 chunks of 4L bytes of codes) as eight VNNI operands of value + 12.
inline void unpack_codes(const uint8_t* chunks, int64_t lanes, __mmask64 chunk_mask, __m512i* w) {
  alignas(16) static constexpr int8_t kBiased[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};
  const __m512i table = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kBiased)));
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int c = 0; c < 4; ++c) {
    const __m512i raw = _mm512_maskz_loadu_epi8(chunk_mask, chunks + c * 4 * lanes);
    w[2 * c] = _mm512_shuffle_epi8(table, _mm512_and_si512(raw, low4));
    w[2 * c + 1] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4));
  }
}

// Σ (v + 12)·a over chunks [c0, c1) of a block, starting from `offset` (-12 times the activations' sum there).
inline __m512i dot_chunks(const __m512i* w, const ActBlock& a, int c0, int c1, int32_t offset) {
  __m512i even = _mm512_set1_epi32(offset), odd = _mm512_setzero_si512();
  for (int c = c0; c < c1; c += 2) {
    even = _mm512_dpbusd_epi32(even, w[c], broadcast_dword(a.q + 4 * c));
    odd = _mm512_dpbusd_epi32(odd, w[c + 1], broadcast_dword(a.q + 4 * c + 4));
  }
  return _mm512_add_epi32(even, odd);
}

// Tokens t0 .. t0 + NT - 1 against the tile of `lanes` rows at row `first`. half_sums: per token
// and activation block, the sums of its two 16-value halves (NVFP4's offsets).
template <DType T, int NT>
void pass(const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const int32_t* half_sums, bool prefetch) {
  const int64_t n_blocks = task.n_blocks, per_block = T == DType::NVFP4 ? 2 : 1;  // activation blocks per layout block
  const int64_t tile_block = lanes * block_bytes(T), header = lanes * header_per_lane(T);
  const uint8_t* tile = task.w + first * (n_blocks / per_block) * block_bytes(T);
  const __mmask16 lane_mask = __mmask16((1u << lanes) - 1);
  const __mmask64 chunk_mask = lanes == 16 ? ~__mmask64(0) : (__mmask64(1) << (4 * lanes)) - 1;
  const ActBlock* acts = task.acts + t0 * n_blocks;
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t lb = 0; lb < n_blocks / per_block; ++lb) {
    const uint8_t* blk = tile + lb * tile_block;
    if (prefetch)  // the first pass over the tile (packed_dot_avx512vnni.cc: 2x from DRAM at 8 tokens)
      for (int64_t off = 0; off < tile_block; off += 64) _mm_prefetch(reinterpret_cast<const char*>(blk + kPrefetchBytes + off), _MM_HINT_T0);
    for (int64_t h = 0; h < per_block; ++h) {
      const int64_t b = lb * per_block + h;
      __m512i w[8];
      unpack_codes(blk + header + h * 16 * lanes, lanes, chunk_mask, w);
      if constexpr (T == DType::MXFP4) {
        const __m512 d = e8m0_half(lane_bytes(blk, lane_mask));
        for (int t = 0; t < NT; ++t) {
          const ActBlock& a = acts[t * n_blocks + b];
          const __m512i sum = dot_chunks(w, a, 0, 8, -kBias * a.sum);
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(a.d)), acc[t]);
        }
      } else {
        const __m512 d0 = ue4m3_half(lane_bytes(blk + 2 * h * lanes, lane_mask));
        const __m512 d1 = ue4m3_half(lane_bytes(blk + (2 * h + 1) * lanes, lane_mask));
        for (int t = 0; t < NT; ++t) {
          const ActBlock& a = acts[t * n_blocks + b];
          const int32_t* hs = half_sums + ((t0 + t) * n_blocks + b) * 2;
          const __m512i lo = dot_chunks(w, a, 0, 4, -kBias * hs[0]), hi = dot_chunks(w, a, 4, 8, -kBias * hs[1]);
          const __m512 da = _mm512_set1_ps(a.d);
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_mul_ps(d0, da), acc[t]);
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_mul_ps(d1, da), acc[t]);
        }
      }
    }
  }
  float* y = task.y + t0 * task.y_stride + first;
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * task.y_stride, lane_mask, acc[t]);
}

template <DType T, int... N>
void pass_of(int nt, const PackedDotTask& task, int64_t first, int64_t lanes, int64_t t0, const int32_t* half_sums,
             bool prefetch, std::integer_sequence<int, N...>) {
  ((nt == N + 1 ? pass<T, N + 1>(task, first, lanes, t0, half_sums, prefetch) : void()), ...);
}

template <DType T>
void run(const PackedDotTask& task) {
  const int64_t n_blocks = task.n_blocks;
  thread_local std::vector<int32_t> sums;
  if constexpr (T == DType::NVFP4) {
    sums.resize(size_t(task.n_tokens * n_blocks * 2));
    for (int64_t tb = 0; tb < task.n_tokens * n_blocks; ++tb) half_sums(task.acts[tb], sums[size_t(2 * tb)], sums[size_t(2 * tb + 1)]);
  }
  for_each_balanced_pass(task.row_begin, task.row_end, task.rows, task.n_tokens, kTokenChunk, kMaxPass,
                         [&](int64_t first, int64_t lanes, int64_t t, int64_t nt, bool first_pass) {
                           pass_of<T>(int(nt), task, first, lanes, t, sums.data(), first_pass,
                                      std::make_integer_sequence<int, kMaxPass>{});
                         });
}

}  // namespace

void dot_avx512vnni(const PackedDotTask& task) {
  if (task.type == DType::MXFP4) return run<DType::MXFP4>(task);
  run<DType::NVFP4>(task);
}

}  // namespace ridge::cpu::fp4_packed
