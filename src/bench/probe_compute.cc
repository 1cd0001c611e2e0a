#include "bench/probe_compute.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "bench/pinned_team.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge::bench {
namespace {

// Twelve accumulators: enough independent chains to cover FMA latency (4 cycles) on two ports.
constexpr int kChains = 12;

// An empty asm that claims to change `v`, so the compiler cannot hoist the loop-invariant
// multiply out of the loop.
#define RIDGE_OPAQUE(v) asm volatile("" : "+v"(v))

__attribute__((target("avx512f"))) double fma_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  const __m512 b = _mm512_set1_ps(0.999999f), d = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], b, d);
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  alignas(64) float lanes[16];  // (GCC 12 warns falsely inside _mm512_reduce_add_ps)
  _mm512_store_ps(lanes, s);
  double sum = 0;
  for (float lane : lanes) sum += lane;
  return sum;
}

__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  const __m256 b = _mm256_set1_ps(0.999999f), d = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], b, d);
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

__attribute__((target("avx512f,avx512vnni"))) double vnni_avx512(int64_t iterations) {
  __m512i acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_epi32(c);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  __m512i s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_epi32(s, acc[c]);
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  double sum = 0;
  for (int32_t lane : lanes) sum += lane;
  return sum;
}

__attribute__((target("avx2,avxvnni"))) double vnni_avx256(int64_t iterations) {
  __m256i acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_epi32(c);
  const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_dpbusd_avx_epi32(acc[c], a, b);
  __m256i s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_epi32(s, acc[c]);
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return double(lanes[0]) + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

// The pre-VNNI sequence of llama.cpp's q8 dot products: u8×s8 pairs to s16, pairs of s16 to s32, add.
// Named variables, not arrays: GCC keeps an array touched by asm in memory, and the store/load on
// every accumulator would be what this measures.
__attribute__((target("avx2"))) double maddubs_avx2(int64_t iterations) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0, acc5 = acc0;
  __m256i a0 = _mm256_set1_epi8(3), a1 = _mm256_set1_epi8(4), a2 = _mm256_set1_epi8(5);
  __m256i a3 = _mm256_set1_epi8(6), a4 = _mm256_set1_epi8(7), a5 = _mm256_set1_epi8(8);
  const __m256i b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
#define RIDGE_STEP(a, acc) \
  RIDGE_OPAQUE(a);         \
  acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones))
  for (int64_t i = 0; i < iterations; ++i) {
    RIDGE_STEP(a0, acc0);
    RIDGE_STEP(a1, acc1);
    RIDGE_STEP(a2, acc2);
    RIDGE_STEP(a3, acc3);
    RIDGE_STEP(a4, acc4);
    RIDGE_STEP(a5, acc5);
  }
#undef RIDGE_STEP
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3)),
                                     _mm256_add_epi32(acc4, acc5));
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return double(lanes[0]) + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

double fma_scalar(int64_t iterations) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = float(c);
  for (int64_t i = 0; i < iterations; ++i)
    for (float& a : acc) a = a * 0.999999f + 1e-6f;
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

// AMX: four accumulator tiles (two A x two B operands) so consecutive tile multiplies are
// independent, as a GEMM's inner loop runs them; the operands stay in tile registers.
struct alignas(64) AmxTileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

__attribute__((target("amx-tile"))) void amx_load_operands(uint16_t value) {
  AmxTileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  asm volatile("" ::: "memory");
  _tile_loadconfig(&cfg);
  alignas(64) uint16_t operand[512];
  for (uint16_t& v : operand) v = value;
  asm volatile("" ::: "memory");
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

__attribute__((target("amx-tile"))) double amx_finish() {
  alignas(64) int32_t out[256];
  _tile_stored(0, out, 64);
  asm volatile("" ::: "memory");
  _tile_release();
  return double(out[0]) + out[255];
}

// The same loop for both tile multiplies (tile numbers must be literals: no loop over them).
template <bool Bf16>
__attribute__((target("amx-tile,amx-int8,amx-bf16"))) double amx_peak(int64_t iterations) {
  amx_load_operands(Bf16 ? 0x3c00 : 0x0101);  // bf16 0.0078125 keeps the sums finite
#define RIDGE_TILE_MUL(c, a, b) \
  if constexpr (Bf16) _tile_dpbf16ps(c, a, b); \
  else _tile_dpbssd(c, a, b)
  for (int64_t i = 0; i < iterations; ++i) {
    RIDGE_TILE_MUL(0, 4, 6);
    RIDGE_TILE_MUL(1, 4, 7);
    RIDGE_TILE_MUL(2, 5, 6);
    RIDGE_TILE_MUL(3, 5, 7);
  }
#undef RIDGE_TILE_MUL
  return amx_finish();
}
double amx_int8(int64_t iterations) { return amx_peak<false>(iterations); }
double amx_bf16(int64_t iterations) { return amx_peak<true>(iterations); }

// Flops per trip: chains × lanes × 2 (FMA = multiply + add); int8: chains × lanes × 4 bytes × 2.
const ComputeKernel kFmaAvx512{"avx512-fma", fma_avx512, kChains * 16 * 2};
const ComputeKernel kFmaAvx2{"avx2-fma", fma_avx2, kChains * 8 * 2};
const ComputeKernel kFmaScalar{"scalar", fma_scalar, kChains * 2};
const ComputeKernel kVnniAvx512{"avx512-vnni", vnni_avx512, kChains * 64 * 2};
const ComputeKernel kVnniAvx256{"avx-vnni", vnni_avx256, kChains * 32 * 2};
const ComputeKernel kMaddubsAvx2{"avx2-maddubs", maddubs_avx2, 6 * 32 * 2};
// Four tile multiplies per trip: 16 x 16 outputs, each a dot of 64 int8 / 32 bf16 pairs.
const ComputeKernel kAmxInt8{"amx-int8", amx_int8, 4 * 16 * 16 * 64 * 2};
const ComputeKernel kAmxBf16{"amx-bf16", amx_bf16, 4 * 16 * 16 * 32 * 2};

std::atomic<double> g_sink{0};

}  // namespace

std::vector<const ComputeKernel*> f32_kernels() {
  std::vector<const ComputeKernel*> kernels;
  if (__builtin_cpu_supports("avx512f")) kernels.push_back(&kFmaAvx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kernels.push_back(&kFmaAvx2);
  if (kernels.empty()) kernels.push_back(&kFmaScalar);
  return kernels;
}

std::vector<const ComputeKernel*> int8_kernels() {
  std::vector<const ComputeKernel*> kernels;
  if (__builtin_cpu_supports("avx512vnni")) kernels.push_back(&kVnniAvx512);
  if (__builtin_cpu_supports("avxvnni")) kernels.push_back(&kVnniAvx256);
  if (__builtin_cpu_supports("avx2")) kernels.push_back(&kMaddubsAvx2);
  if (kernels.empty()) kernels.push_back(&kFmaScalar);
  return kernels;
}

std::vector<const ComputeKernel*> amx_int8_kernels() {
  if (!cpu::amx_usable()) return {};
  return {&kAmxInt8};
}

std::vector<const ComputeKernel*> amx_bf16_kernels() {
  if (!cpu::amx_usable() || !__builtin_cpu_supports("amx-bf16")) return {};
  return {&kAmxBf16};
}

double peak_gops(const ComputeKernel& kernel, int threads, double seconds) {
  // Calibrate on one thread, then size the run to take about `seconds`.
  int64_t iterations = 1 << 16;
  double elapsed = 0;
  while ((elapsed = run_pinned_team(1, [&](int) { g_sink = g_sink + kernel.run(iterations); })) < 0.02)
    iterations *= 4;
  iterations = std::max<int64_t>(1, int64_t(double(iterations) * seconds / elapsed));
  const double wall = run_pinned_team(threads, [&](int) { g_sink = g_sink + kernel.run(iterations); });
  return kernel.ops_per_iteration * double(iterations) * threads / wall / 1e9;
}

}  // namespace ridge::bench
