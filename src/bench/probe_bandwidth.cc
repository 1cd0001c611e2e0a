#include "bench/probe_bandwidth.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>

#include "bench/pinned_team.h"
#include "core/error.h"

namespace ridge::bench {
namespace {

constexpr size_t kStep = 512;  // bytes per loop iteration: eight 64-byte or sixteen 32-byte loads

__attribute__((target("avx512f"))) uint64_t sum_avx512(const uint8_t* p, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (size_t i = 0; i + kStep <= n; i += kStep) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 64));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 128));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 192));
    a4 = _mm512_add_epi64(a4, _mm512_load_si512(p + i + 256));
    a5 = _mm512_add_epi64(a5, _mm512_load_si512(p + i + 320));
    a6 = _mm512_add_epi64(a6, _mm512_load_si512(p + i + 384));
    a7 = _mm512_add_epi64(a7, _mm512_load_si512(p + i + 448));
  }
  const __m512i s = _mm512_add_epi64(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)),
                                     _mm512_add_epi64(_mm512_add_epi64(a4, a5), _mm512_add_epi64(a6, a7)));
  alignas(64) uint64_t lanes[8];  // (GCC 12 warns falsely inside _mm512_reduce_add_epi64)
  _mm512_store_si512(lanes, s);
  uint64_t sum = 0;
  for (uint64_t lane : lanes) sum += lane;
  return sum;
}

__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* p, size_t n) {
  __m256i a[8];
  for (auto& v : a) v = _mm256_setzero_si256();
  for (size_t i = 0; i + kStep <= n; i += kStep) {
    for (size_t j = 0; j < 16; ++j) {
      const auto* src = reinterpret_cast<const __m256i*>(p + i + 32 * j);
      a[j % 8] = _mm256_add_epi64(a[j % 8], _mm256_load_si256(src));
    }
  }
  __m256i s = a[0];
  for (int j = 1; j < 8; ++j) s = _mm256_add_epi64(s, a[j]);
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

uint64_t sum_scalar(const uint8_t* p, size_t n) {
  uint64_t s[4] = {};
  for (size_t i = 0; i + 32 <= n; i += 32) {
    for (size_t j = 0; j < 4; ++j) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * j, 8);
      s[j] += v;
    }
  }
  return s[0] + s[1] + s[2] + s[3];
}

using SumFn = uint64_t (*)(const uint8_t*, size_t);

SumFn pick_sum() {
  if (__builtin_cpu_supports("avx512f")) return sum_avx512;
  if (__builtin_cpu_supports("avx2")) return sum_avx2;
  return sum_scalar;
}

// Slice `i` of `n` of a buffer, in whole kStep units.
void slice(size_t bytes, int i, int n, size_t& begin, size_t& length) {
  const size_t steps = bytes / kStep;
  begin = steps * size_t(i) / size_t(n) * kStep;
  length = steps * size_t(i + 1) / size_t(n) * kStep - begin;
}

std::atomic<uint64_t> g_sink{0};  // the sums land here so the loads are observable

}  // namespace

ReadBuffer::ReadBuffer(size_t bytes, int touch_threads) : bytes_(bytes / kStep * kStep) {
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fail("cannot map a {} MiB buffer for the bandwidth probe", bytes_ >> 20);
  madvise(p, bytes_, MADV_HUGEPAGE);
  data_ = static_cast<uint8_t*>(p);
  run_pinned_team(touch_threads, [&](int i) {
    size_t begin, length;
    slice(bytes_, i, touch_threads, begin, length);
    for (size_t at = 0; at < length; at += 64) data_[begin + at] = uint8_t(at >> 6);
  });
}

ReadBuffer::~ReadBuffer() {
  if (data_) munmap(data_, bytes_);
}

double read_bandwidth_gbs(const ReadBuffer& buffer, int threads) {
  static const SumFn sum = pick_sum();
  const double seconds = run_pinned_team(threads, [&](int i) {
    size_t begin, length;
    slice(buffer.size(), i, threads, begin, length);
    g_sink.fetch_add(sum(buffer.data() + begin, length), std::memory_order_relaxed);
  });
  return double(buffer.size()) / seconds / 1e9;
}

const char* read_kernel_name() {
  const SumFn sum = pick_sum();
  return sum == sum_avx512 ? "avx512" : sum == sum_avx2 ? "avx2" : "scalar";
}

}  // namespace ridge::bench
