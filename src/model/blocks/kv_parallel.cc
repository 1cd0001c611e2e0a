// Helix's attention half on one rank (model/forward.h, KvParallel): the K/V of the positions this
// rank keeps, its own positions as the attention's history, and the ranks' partial softmax results
// merged in rank order. Positions are dealt out one by one (p % size), not in ranges, so every
// sequence, short or long, spreads its history and its attention evenly over the group, and the
// scheduler's block tables and block ids serve every rank unchanged: each rank's store holds a
// 1/size share of every block.
#include <algorithm>

#include "core/error.h"
#include "model/forward.h"

namespace ridge {

void ModelForward::write_kv(KvStore& store, int64_t layer, int64_t t, const float* k, const float* v) {
  const int32_t p = positions_[size_t(t)], block = table_block_size(store);
  if (p % kvp_.size != kvp_.rank) return;  // another rank keeps it
  const std::span<const BlockId> table = batch_->runs[size_t(run_of_[size_t(t)])].blocks;
  store.write(layer, table[size_t(p / block)], (p % block) / kvp_.size, k, v);
}

// Rank r keeps positions r, r + size, r + 2 size, ...: position p is its local index (p - r) / size.
// A token at p sees local indices up to floor((p - r) / size) (-1: none yet) from
// ceil((first - r) / size) on.
void ModelForward::begin_local_positions(int64_t n) {
  if (!kv_parallel()) return;
  const int32_t r = kvp_.rank, size = kvp_.size;
  global_positions_.assign(positions_.begin(), positions_.begin() + n);
  for (int64_t t = 0; t < n; ++t) {
    const int32_t p = positions_[size_t(t)], first = first_position_[size_t(t)];
    positions_[size_t(t)] = p >= r ? (p - r) / size : -1;
    first_position_[size_t(t)] = first <= r ? 0 : (first - r + size - 1) / size;
  }
}

void ModelForward::end_local_positions() {
  if (!kv_parallel()) return;
  std::copy(global_positions_.begin(), global_positions_.end(), positions_.begin());
}

void ModelForward::reserve_kv_partials(int64_t n, int64_t units, int64_t unit_floats) {
  kvp_units_ = units;
  kvp_unit_floats_ = unit_floats;
  kvp_mine_.resize(size_t(n * units * unit_floats));
}

void ModelForward::merge_kv_parallel(int64_t n, const std::function<void(int64_t, int64_t, const float*)>& finish) {
  if (!tp_.gather_rows) fail("KV parallelism needs its group's gathers (dist/stage_forward)");
  const int size = kvp_.size;
  const int64_t units = kvp_units_, unit = kvp_unit_floats_, row = units * unit;
  const std::vector<int64_t> rows(size_t(size), n);
  kvp_all_.resize(size_t(size * n * row));
  tp_.gather_rows(kvp_mine_.data(), rows, row, kvp_all_.data());
  pool_->parallel_for(n * units, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> ranks(size_t(size * unit));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t t = i / units, u = i % units;
      for (int r = 0; r < size; ++r)
        std::copy_n(kvp_all_.data() + (r * n + t) * row + u * unit, unit, ranks.data() + r * unit);
      finish(t, u, ranks.data());
    }
  });
}

}  // namespace ridge
