// Activation quantization and quantized dot products in the reference's order (ggml_mirror.h).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "kernels/cpu/isa.h"
#include "kernels/mirror/ggml_mirror.h"

namespace ridge::mirror {
namespace {

// ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)): upper half onto lower, then pairs two apart,
// then neighbours, the reduction the reference applies to an 8-lane accumulator.
float sum_lanes(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

float half_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return _cvtsh_ss(v);
}

// One block of 32 values: scale, quants, and the sum of the quants.
struct Quantized {
  float d;
  int32_t sum;
};

Quantized quantize_block(const float* x, int8_t* qs) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  int32_t sum = 0;
  for (int j = 0; j < 32; ++j) {
    const auto q = int32_t(std::nearbyint(x[j] * id));  // round half to even, as the reference's rounding mode
    qs[j] = int8_t(q);
    sum += q;
  }
  return {d, sum};
}

}  // namespace

bool supported() { return cpu::isa_supported(cpu::Isa::Avx2); }

void f16_to_f32_row(const uint16_t* x, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = _cvtsh_ss(x[i]);
}

void quantize_q8_0(const float* x, int64_t n, BlockQ8_0* out) {
  for (int64_t b = 0; b < n / 32; ++b) out[b].d = f32_to_f16(quantize_block(x + b * 32, out[b].qs).d);
}

void quantize_q8_1(const float* x, int64_t n, BlockQ8_1* out) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const Quantized q = quantize_block(x + b * 32, out[b].qs);
    out[b].d = f32_to_f16(q.d);
    out[b].s = f32_to_f16(q.d * float(q.sum));
  }
}

float dot_q4_1_q8_1(const uint8_t* row, const BlockQ8_1* act, int64_t n_blocks) {
  const __m256i low_nibbles = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  float minimums = 0.0f;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = row + b * 20;  // f16 d, f16 m, 16 bytes of nibbles
    const float d = half_at(block) * _cvtsh_ss(act[b].d);
    // The compiled reference contracts `summs += m * s` into one fused multiply-add.
    minimums = std::fma(half_at(block + 2), _cvtsh_ss(act[b].s), minimums);
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4));
    // Values 0..15 are the low nibbles, 16..31 the high ones.
    const __m256i w = _mm256_and_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(packed), _mm_srli_epi16(packed, 4), 1), low_nibbles);
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[b].qs));
    const __m256i fours = _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), ones);  // exact: |pair| <= 2 * 15 * 127
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(fours), acc);
  }
  return sum_lanes(acc) + minimums;
}

float dot_q8_0_q8_0(const uint8_t* row, const BlockQ8_0* act, int64_t n_blocks) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* block = row + b * 34;  // f16 d, 32 int8
    const float d = half_at(block) * _cvtsh_ss(act[b].d);
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[b].qs));
    // |w| times a with w's sign: unsigned x signed pairs that cannot saturate.
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones)), acc);
  }
  return sum_lanes(acc);
}

}  // namespace ridge::mirror
