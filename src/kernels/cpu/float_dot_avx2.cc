// Dot kernels for F32, F16 and BF16 weights (AVX2 + FMA + F16C): weights are converted to f32 in
// registers, eight at a time, and dotted with up to four tokens per load. Each (row, token) pair
// runs the same sequence (two accumulators over steps of sixteen, then a scalar tail), so a
// token's result does not depend on the tile it shares.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/fp16.h"
#include "kernels/cpu/matmul_kernels.h"

namespace ridge::cpu {
namespace {

template <DType T>
inline __m256 load8(const uint8_t* row, int64_t i) {
  if constexpr (T == DType::F32) return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i));
  if constexpr (T == DType::F16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // BF16
}

template <DType T>
inline float load1(const uint8_t* row, int64_t i) {
  if constexpr (T == DType::F32) {
    float v;
    std::memcpy(&v, row + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, row + 2 * i, 2);
  if constexpr (T == DType::F16) return f16_to_f32(h);
  return bf16_to_f32(h);
}

inline float hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

template <DType T, int NT>
void tile(const FloatDotTask& task, int64_t r, int64_t t0) {
  const uint8_t* row = task.w + r * task.row_bytes;
  const int64_t n = task.cols;
  __m256 a0[NT], a1[NT];
  for (int t = 0; t < NT; ++t) a0[t] = a1[t] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = load8<T>(row, i), w1 = load8<T>(row, i + 8);
    for (int t = 0; t < NT; ++t) {
      const float* x = task.x + (t0 + t) * n + i;
      a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x), a0[t]);
      a1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + 8), a1[t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    float sum = hsum(_mm256_add_ps(a0[t], a1[t]));
    const float* x = task.x + (t0 + t) * n;
    for (int64_t j = i; j < n; ++j) sum += load1<T>(row, j) * x[j];
    task.y[(t0 + t) * task.y_stride + r] = sum;
  }
}

// F8_E4M3: 8 bytes to 8 floats of value / 256, exactly: the byte's sign, exponent and mantissa
// moved into an f16 (exponent bias 15 instead of 7: a factor 2^-8, subnormals included).
inline __m256 load8_fp8(const uint8_t* row, int64_t i) {
  const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i)));
  const __m128i sign = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8);
  return _mm256_cvtph_ps(_mm_or_si128(sign, _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x7f)), 7)));
}

// FP8 rows (cols a multiple of 16, groups of group_cols values): per group the same two-chain sum
// as the other types, then total = fma(sum, 256 * scale, total), group after group.
template <int NT>
void tile_fp8(const FloatDotTask& task, int64_t r, int64_t t0) {
  const uint8_t* row = task.w + r * task.row_bytes;
  const int64_t n = task.cols, gc = task.group_scales ? task.group_cols : n, groups = n / gc;
  float total[NT] = {};
  for (int64_t g = 0; g < groups; ++g) {
    __m256 a0[NT], a1[NT];
    for (int t = 0; t < NT; ++t) a0[t] = a1[t] = _mm256_setzero_ps();
    for (int64_t i = g * gc; i < (g + 1) * gc; i += 16) {
      const __m256 w0 = load8_fp8(row, i), w1 = load8_fp8(row, i + 8);
      for (int t = 0; t < NT; ++t) {
        const float* x = task.x + (t0 + t) * n + i;
        a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x), a0[t]);
        a1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + 8), a1[t]);
      }
    }
    const float s = 256.0f * (task.group_scales ? task.group_scales[r * groups + g] : 1.0f);
    for (int t = 0; t < NT; ++t) total[t] = std::fma(hsum(_mm256_add_ps(a0[t], a1[t])), s, total[t]);
  }
  for (int t = 0; t < NT; ++t) task.y[(t0 + t) * task.y_stride + r] = total[t];
}

template <DType T, int NT>
void tile_of(const FloatDotTask& task, int64_t r, int64_t t0) {
  if constexpr (T == DType::F8_E4M3) tile_fp8<NT>(task, r, t0);
  else tile<T, NT>(task, r, t0);
}

template <DType T>
void run(const FloatDotTask& task) {
  constexpr int64_t kTokenChunk = 16;  // a chunk of inputs stays in L1/L2 while rows stream by
  for (int64_t c0 = 0; c0 < task.n_tokens; c0 += kTokenChunk) {
    const int64_t c_end = std::min(task.n_tokens, c0 + kTokenChunk);
    for (int64_t r = task.row_begin; r < task.row_end; ++r) {
      int64_t t = c0;
      for (; t + 4 <= c_end; t += 4) tile_of<T, 4>(task, r, t);
      for (; t < c_end; ++t) tile_of<T, 1>(task, r, t);
    }
  }
}

}  // namespace

void float_dot_avx2(const FloatDotTask& task) {
  switch (task.type) {
    case DType::F32: return run<DType::F32>(task);
    case DType::F16: return run<DType::F16>(task);
    case DType::BF16: return run<DType::BF16>(task);
    case DType::F8_E4M3:
      if (task.cols % 16 != 0 || (task.group_scales && (task.group_cols % 16 != 0 || task.cols % task.group_cols != 0)))
        fail("F8_E4M3 rows of {} values in groups of {}: both must be multiples of 16", task.cols, task.group_cols);
      return run<DType::F8_E4M3>(task);
    default: break;
  }
}

}  // namespace ridge::cpu
