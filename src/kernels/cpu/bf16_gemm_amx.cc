// The AMX BF16 prefill GEMM (bf16_gemm.h). Blocking: the row's 32-value steps are taken 32 at a
// time (1,024 values); within such a slice, each pair of 16-row tiles is decoded once into B
// operands (64 KiB), then every pair of 16-token tiles runs through it with four f32 accumulator
// tiles (2 x 2), which start from y after the first slice. Partial tiles of tokens or rows get a
// tile configuration with fewer rows or columns, so no padding is ever stored.
#include <immintrin.h>

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/fp16.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"

namespace ridge::cpu {
namespace {

constexpr int64_t kSliceSteps = 32;

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// See packed_dot_amx.cc: the tile intrinsics do not tell the compiler they touch memory.
inline void memory_barrier() { __asm__ volatile("" ::: "memory"); }

// Tiles 0-3: f32 accumulators (tokens x weight rows); 4, 5: activations; 6, 7: weights.
void configure(int token_rows, int weight_rows) {
  TileConfig cfg;
  for (int c = 0; c < 4; ++c) cfg.colsb[c] = uint16_t(4 * weight_rows), cfg.rows[c] = uint8_t(token_rows);
  for (int a : {4, 5}) cfg.colsb[a] = 64, cfg.rows[a] = uint8_t(token_rows);
  for (int b : {6, 7}) cfg.colsb[b] = uint16_t(4 * weight_rows), cfg.rows[b] = 16;
  memory_barrier();
  _tile_loadconfig(&cfg);
}

// Sixteen f32 weights of lane n (even values `e`, odd values `o`) as the B operand's row of pairs.
inline void emit_pairs(__m512 e, __m512 o, uint16_t* out) {
  static const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23,
                                                     7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i words = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(o, e));  // e's 16 bf16, then o's
  _mm512_storeu_si512(out, _mm512_permutexvar_epi16(interleave, words));
}

// Steps [k0, k0 + ks) of a full packed tile of sixteen rows as B operands (one step per block).
template <DType T>
void decode_packed(const uint8_t* tile, int64_t k0, int64_t ks, uint16_t* out) {
  const __m512i byte = _mm512_set1_epi32(0xff), nibbles = _mm512_set1_epi32(0x0f0f0f0f);
  for (int64_t s = 0; s < ks; ++s, out += kBf16StepWords) {
    const uint8_t* p = tile + (k0 + s) * PackedGeometry<T>::tile_block_bytes;
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    const uint8_t* q = p + PackedGeometry<T>::header * kTileRows;
    // w = d·q + offset, exact in f32 (d has 11 bits, q at most 8): the reference's value.
    __m512 offset;
    if constexpr (T == DType::Q4_0) offset = _mm512_mul_ps(d, _mm512_set1_ps(-8.0f));
    if constexpr (T == DType::Q4_1) offset = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)));
    if constexpr (T == DType::Q8_0) offset = _mm512_mul_ps(d, _mm512_set1_ps(-128.0f));  // stored as w + 128
    auto value = [&](__m512i v) { return _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), d, offset); };
    auto pairs = [&](__m512i v, int shift, uint16_t* row) {  // bytes `shift`/8 and the next of each lane
      emit_pairs(value(_mm512_and_si512(_mm512_srli_epi32(v, shift), byte)),
                 value(_mm512_and_si512(_mm512_srli_epi32(v, shift + 8), byte)), row);
    };
    if constexpr (T == DType::Q8_0) {
      // Chunk c holds values 4c..4c+3 of every lane: B rows 2c and 2c + 1.
      for (int c = 0; c < 8; ++c) {
        const __m512i raw = _mm512_loadu_si512(q + 64 * c);
        pairs(raw, 0, out + (2 * c) * 32);
        pairs(raw, 16, out + (2 * c + 1) * 32);
      }
    } else {
      // Chunk c: low nibbles are values 8c..8c+3, high nibbles 8c+4..8c+7: B rows 4c .. 4c + 3.
      for (int c = 0; c < 4; ++c) {
        const __m512i raw = _mm512_loadu_si512(q + 64 * c);
        const __m512i lo = _mm512_and_si512(raw, nibbles), hi = _mm512_and_si512(_mm512_srli_epi32(raw, 4), nibbles);
        pairs(lo, 0, out + (4 * c) * 32);
        pairs(lo, 16, out + (4 * c + 1) * 32);
        pairs(hi, 0, out + (4 * c + 2) * 32);
        pairs(hi, 16, out + (4 * c + 3) * 32);
      }
    }
  }
}

// Q6_K super-blocks to f32 with AVX-512, the reference's values (every product is exact in f32:
// d has 11 bits, the scale 8, the quant 6), sixteen at a time.
void dequantize_q6_k_avx512(const uint8_t* src, float* dst, int64_t n_blocks) {
  const __m512i low4 = _mm512_set1_epi32(0x0f), two = _mm512_set1_epi32(3), offset = _mm512_set1_epi32(32);
  for (int64_t b = 0; b < n_blocks; ++b, src += 210, dst += 256) {
    const auto* scales = reinterpret_cast<const int8_t*>(src + 192);
    uint16_t d_bits;
    std::memcpy(&d_bits, src + 208, 2);
    const float d = f16_to_f32(d_bits);
    for (int h = 0; h < 2; ++h)
      for (int g = 0; g < 4; ++g)
        for (int sub = 0; sub < 2; ++sub) {
          const int l = sub * 16, i = h * 128 + g * 32 + l;
          const __m512i lb = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + h * 64 + (g % 2) * 32 + l)));
          const __m512i hb = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 128 + h * 32 + l)));
          const __m512i low = g < 2 ? _mm512_and_si512(lb, low4) : _mm512_srli_epi32(lb, 4);
          const __m512i high = _mm512_and_si512(_mm512_srli_epi32(hb, 2 * g), two);
          const __m512i q = _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), offset);
          const float dl = d * float(scales[i / 16]);
          _mm512_storeu_ps(dst + i, _mm512_mul_ps(_mm512_set1_ps(dl), _mm512_cvtepi32_ps(q)));
        }
  }
}

// Any supported matrix, any n <= 16 rows (lanes past n are zero): each row's values of the slice
// dequantized by the reference, rounded to bf16, then laid out as pairs.
void decode_generic(const Bf16GemmTask& t, int64_t first, int64_t n, int64_t k0, int64_t ks, uint16_t* out) {
  std::memset(out, 0, size_t(ks * kBf16StepWords) * sizeof(uint16_t));
  thread_local std::vector<float> values;
  thread_local std::vector<uint16_t> row;
  thread_local std::vector<uint8_t> blocks;  // a packed row's slice back in GGUF blocks
  const int64_t k_begin = k0 * kBf16StepValues, k_len = ks * kBf16StepValues;
  values.resize(size_t(k_len));
  row.resize(size_t(k_len));
  blocks.resize(size_t(dtype_row_bytes(t.type, k_len)));
  for (int64_t lane = 0; lane < n; ++lane) {
    const int64_t r = first + lane;
    const float* v = values.data();
    const uint8_t* src = t.w + r * dtype_row_bytes(t.type, t.cols) + dtype_row_bytes(t.type, k_begin);
    if (t.packed) {  // only the slice's blocks: the whole row would be decoded once per slice
      unpack_row_range(t.type, t.w, t.rows, t.cols, r, k_begin, k_len, blocks.data());
      src = blocks.data();
    }
    if (t.type == DType::Q6_K) dequantize_q6_k_avx512(src, values.data(), k_len / 256);
    else ref::dequantize_row(t.type, src, values.data(), k_len);
    for (int64_t k = 0; k < k_len; k += 32) {
      const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(v + k + 16), _mm512_loadu_ps(v + k));
      _mm512_storeu_si512(row.data() + k, reinterpret_cast<__m512i>(h));
    }
    // Pair i of step s of this lane: the dword at s * 256 + i * 16 + lane of the operands.
    const auto* pairs = reinterpret_cast<const uint32_t*>(row.data());
    auto* dst = reinterpret_cast<uint32_t*>(out);
    for (int64_t s = 0; s < ks; ++s)
      for (int64_t i = 0; i < 16; ++i) dst[s * 256 + i * 16 + lane] = pairs[s * 16 + i];
  }
}

void decode(const Bf16GemmTask& t, int64_t first, int64_t n, int64_t k0, int64_t ks, uint16_t* out) {
  if (t.packed && n == kTileRows) {
    const int64_t n_blocks = t.cols / kActBlock;
    switch (t.type) {
      case DType::Q4_0:
        return decode_packed<DType::Q4_0>(t.w + first * n_blocks * PackedGeometry<DType::Q4_0>::block_bytes, k0, ks, out);
      case DType::Q4_1:
        return decode_packed<DType::Q4_1>(t.w + first * n_blocks * PackedGeometry<DType::Q4_1>::block_bytes, k0, ks, out);
      case DType::Q8_0:
        return decode_packed<DType::Q8_0>(t.w + first * n_blocks * PackedGeometry<DType::Q8_0>::block_bytes, k0, ks, out);
      default: break;
    }
  }
  decode_generic(t, first, n, k0, ks, out);
}

// One block of up to 2 x 2 accumulator tiles over ks steps: tokens of a0 (and a1, the next token
// tile) against the rows of b0 (and b1, the next row tile). y.. point at the tiles' first outputs.
template <bool TwoA, bool TwoB>
void tile_block(const uint16_t* a0, const uint16_t* a1, const uint16_t* b0, const uint16_t* b1, int64_t ks, float* y00,
                float* y01, float* y10, float* y11, int64_t y_bytes, bool accumulate) {
  if (accumulate) {
    _tile_loadd(0, y00, y_bytes);
    if constexpr (TwoB) _tile_loadd(1, y01, y_bytes);
    if constexpr (TwoA) _tile_loadd(2, y10, y_bytes);
    if constexpr (TwoA && TwoB) _tile_loadd(3, y11, y_bytes);
  } else {
    _tile_zero(0);
    if constexpr (TwoB) _tile_zero(1);
    if constexpr (TwoA) _tile_zero(2);
    if constexpr (TwoA && TwoB) _tile_zero(3);
  }
  for (int64_t s = 0; s < ks; ++s) {
    _tile_loadd(4, a0 + s * kBf16StepWords, 64);
    _tile_loadd(6, b0 + s * kBf16StepWords, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (TwoB) {
      _tile_loadd(7, b1 + s * kBf16StepWords, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (TwoA) {
      _tile_loadd(5, a1 + s * kBf16StepWords, 64);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (TwoB) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, y00, y_bytes);
  if constexpr (TwoB) _tile_stored(1, y01, y_bytes);
  if constexpr (TwoA) _tile_stored(2, y10, y_bytes);
  if constexpr (TwoA && TwoB) _tile_stored(3, y11, y_bytes);
  memory_barrier();
}

}  // namespace

bool amx_bf16_usable() {
  static const bool usable = [] {
    const char* env = std::getenv("RIDGE_AMX_BF16");  // 0: prompts take the int8 kernels too (A/B runs)
    if (env && std::strcmp(env, "0") == 0) return false;
    return amx_usable() && __builtin_cpu_supports("amx-bf16") && __builtin_cpu_supports("avx512bf16");
  }();
  return usable;
}

void put_activation_row_bf16(const float* x, int64_t cols, int64_t row, uint16_t* tile) {
  const int64_t steps = cols / kBf16StepValues;
  for (int64_t s = 0; s < steps; ++s) {
    uint16_t* o = tile + s * kBf16StepWords + row * kBf16StepValues;
    if (!x) {
      _mm512_storeu_si512(o, _mm512_setzero_si512());
      continue;
    }
    const float* v = x + s * kBf16StepValues;
    const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(v + 16), _mm512_loadu_ps(v));
    _mm512_storeu_si512(o, reinterpret_cast<__m512i>(h));
  }
}

void tile_activations_bf16(const float* x, int64_t n_tokens, int64_t cols, int64_t j, uint16_t* out) {
  for (int64_t t = 0; t < 16; ++t) {
    const int64_t token = j * 16 + t;
    put_activation_row_bf16(token < n_tokens ? x + token * cols : nullptr, cols, t, out);
  }
}

void bf16_gemm_amx(const Bf16GemmTask& task) {
  const int64_t steps = task.cols / kBf16StepValues;
  const int64_t full_tiles = task.n_tokens / 16, tail = task.n_tokens % 16;
  const int64_t a_tile_words = steps * kBf16StepWords, y_bytes = task.y_stride * int64_t(sizeof(float));
  thread_local std::vector<uint16_t> ops;
  ops.resize(size_t(2 * kSliceSteps * kBf16StepWords));
  int config_tokens = 0, config_rows = 0;
  auto use = [&](int tokens, int rows) {
    if (tokens != config_tokens || rows != config_rows) configure(tokens, rows);
    config_tokens = tokens, config_rows = rows;
  };
  for (int64_t k0 = 0; k0 < steps; k0 += kSliceSteps) {
    const int64_t ks = std::min(kSliceSteps, steps - k0);
    const bool accumulate = k0 > 0;
    // Every token tile against the B operands of `n_tiles` row tiles (1 or 2) starting at row `col`.
    auto tokens_against = [&](const uint16_t* b0, const uint16_t* b1, bool two_b, int64_t width, int64_t col) {
      const uint16_t* a = task.a + k0 * kBf16StepWords;
      use(16, int(width));
      for (int64_t j = 0; j < full_tiles; j += 2) {
        const uint16_t* a0 = a + j * a_tile_words;
        float* y0 = task.y + j * 16 * task.y_stride + col;
        float* y1 = y0 + 16 * task.y_stride;
        const bool two_a = j + 1 < full_tiles;
        if (two_a && two_b) tile_block<true, true>(a0, a0 + a_tile_words, b0, b1, ks, y0, y0 + 16, y1, y1 + 16, y_bytes, accumulate);
        else if (two_a) tile_block<true, false>(a0, a0 + a_tile_words, b0, b1, ks, y0, y0, y1, y1, y_bytes, accumulate);
        else if (two_b) tile_block<false, true>(a0, a0, b0, b1, ks, y0, y0 + 16, y0, y0, y_bytes, accumulate);
        else tile_block<false, false>(a0, a0, b0, b1, ks, y0, y0, y0, y0, y_bytes, accumulate);
      }
      if (tail > 0) {
        use(int(tail), int(width));
        const uint16_t* a0 = a + full_tiles * a_tile_words;
        float* y0 = task.y + full_tiles * 16 * task.y_stride + col;
        if (two_b) tile_block<false, true>(a0, a0, b0, b1, ks, y0, y0 + 16, y0, y0, y_bytes, accumulate);
        else tile_block<false, false>(a0, a0, b0, b1, ks, y0, y0, y0, y0, y_bytes, accumulate);
      }
    };
    for (int64_t r0 = task.row_begin; r0 < task.row_end; r0 += 32) {
      const int64_t n0 = std::min<int64_t>(16, task.row_end - r0);
      const int64_t n1 = std::clamp<int64_t>(task.row_end - r0 - 16, 0, 16);
      uint16_t* b0 = ops.data();
      uint16_t* b1 = b0 + kSliceSteps * kBf16StepWords;
      decode(task, r0, n0, k0, ks, b0);
      if (n1 > 0) decode(task, r0 + 16, n1, k0, ks, b1);
      memory_barrier();
      if (n0 == 16 && n1 == 16) {
        tokens_against(b0, b1, true, 16, r0);
      } else {
        tokens_against(b0, b0, false, n0, r0);
        if (n1 > 0) tokens_against(b1, b1, false, n1, r0 + 16);
      }
    }
  }
  if (config_tokens > 0) _tile_release();
}

}  // namespace ridge::cpu
