#include "bench_matrices.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "bench/machine_profile.h"
#include "bench/probe_system.h"
#include "model/synth/random_weights.h"

namespace ridge::microbench {
namespace {

// Distinct random rows; a large matrix repeats them (values do not change the bytes read).
constexpr int64_t kDistinctRows = 256;

int64_t cache_kib(const char* key) {
  if (const auto profile = bench::load_machine_profile(); profile && profile->contains(key))
    return (*profile)[key].get<int64_t>();
  const bench::SystemInfo info = bench::probe_system();
  return std::string(key) == "l2_kib" ? info.l2_kib : info.l3_kib;
}

// A row of a type `ridge synth` cannot quantize (the codebook i-quants, TQ1_0): random bytes, so
// random grid indices and signs, with each block's f16 scale set to a small finite value. The
// kernels read every byte the same way whatever its value.
void random_codebook_row(DType type, uint64_t row, uint8_t* out) {
  const DTypeInfo& info = dtype_info(type);
  const int64_t n_blocks = kCols / info.block_size;
  uint64_t state = 0x9e3779b97f4a7c15ull * (row + 1);
  for (int64_t i = 0; i < n_blocks * info.block_bytes; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    out[i] = uint8_t(state);
  }
  const uint16_t d = 0x2000;  // 2^-7 as f16
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* blk = out + b * info.block_bytes;
    if (type == DType::IQ1_M) {  // d sits in the top nibbles of its four u16 scales
      for (int w = 0; w < 4; ++w) blk[49 + 2 * w] = uint8_t((blk[49 + 2 * w] & 0x0f) | ((d >> (4 * w)) & 0x0f) << 4);
    } else {
      const bool last = type == DType::Q3_K || type == DType::TQ1_0 || type == DType::TQ2_0;
      std::memcpy(blk + (last ? info.block_bytes - 2 : 0), &d, 2);
    }
  }
}

}  // namespace

std::string footprint_name(Footprint f) { return f == Footprint::L2 ? "l2" : "dram"; }

int64_t footprint_bytes(Footprint f) {
  if (f == Footprint::L2) return std::max<int64_t>(64 << 10, cache_kib("l2_kib") * 1024 / 2);
  const int64_t memory = int64_t(bench::probe_system().memory_gib * double(1ull << 30));
  return std::min(std::max<int64_t>(int64_t(256) << 20, 4 * cache_kib("l3_kib") * 1024), memory / 8);
}

const BenchMatrix& bench_matrix(DType type, Footprint f) {
  static std::map<std::pair<DType, Footprint>, BenchMatrix> cache;
  const auto key = std::make_pair(type, f);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (f == Footprint::Dram) std::erase_if(cache, [](const auto& entry) { return entry.first.second == Footprint::Dram; });

  const int64_t row_bytes = dtype_row_bytes(type, kCols);
  const int64_t rows = std::max<int64_t>(1, footprint_bytes(f) / row_bytes);
  BenchMatrix m;
  m.size_bytes = rows * row_bytes;
  m.bytes.reset(new uint8_t[size_t(m.size_bytes)]);
  const int64_t distinct = std::min(rows, kDistinctRows);
  for (int64_t r = 0; r < distinct; ++r)
    if (synth::can_make_random(type))
      synth::random_row(type, kCols, 0.02f, /*seed=*/7, uint64_t(r), m.bytes.get() + r * row_bytes);
    else
      random_codebook_row(type, uint64_t(r), m.bytes.get() + r * row_bytes);
#pragma omp parallel for schedule(static)
  for (int64_t r = distinct; r < rows; ++r)
    std::memcpy(m.bytes.get() + r * row_bytes, m.bytes.get() + (r % distinct) * row_bytes, size_t(row_bytes));
  m.view = ref::WeightMatrix{type, m.bytes.get(), rows, kCols};
  return cache.emplace(key, std::move(m)).first->second;
}

}  // namespace ridge::microbench
