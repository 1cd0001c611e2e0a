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
    synth::random_row(type, kCols, 0.02f, /*seed=*/7, uint64_t(r), m.bytes.get() + r * row_bytes);
#pragma omp parallel for schedule(static)
  for (int64_t r = distinct; r < rows; ++r)
    std::memcpy(m.bytes.get() + r * row_bytes, m.bytes.get() + (r % distinct) * row_bytes, size_t(row_bytes));
  m.view = ref::WeightMatrix{type, m.bytes.get(), rows, kCols};
  return cache.emplace(key, std::move(m)).first->second;
}

}  // namespace ridge::microbench
