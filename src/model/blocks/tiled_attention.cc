// How the tiles of every token's attention are spread over the threads (kernels/cpu/attention.h).
// Many queries (prefill): each (token, query group) is one part, its tiles computed in order into
// the thread's partials and merged. Few queries over long histories (decode): the tiles
// themselves are the parts (flash-decoding), then a second pass merges each query. The tile
// boundaries are fixed by position, so the bits are the same either way.
#include <algorithm>

#include "kernels/cpu/attention.h"
#include "model/forward.h"

namespace ridge {

void ModelForward::attend(const TiledAttention& a, int64_t n) {
  const int64_t part = a.partial_floats, n_groups = a.n_groups;
  const int64_t n_threads = pool_->size(), n_pairs = n * n_groups;
  auto first_tile = [&](int64_t t) { return cpu::first_attention_tile(first_position_[size_t(t)]); };
  auto tiles_of = [&](int64_t t) { return cpu::attention_tiles(positions_[size_t(t)]) - first_tile(t); };
  int64_t max_tiles = 1;
  for (int64_t t = 0; t < n; ++t) max_tiles = std::max(max_tiles, tiles_of(t));
  scores_.resize(size_t(n_threads * a.scratch_floats));

  if (max_tiles == 1 || n_pairs >= 2 * n_threads) {
    partials_.resize(size_t(n_threads * max_tiles * part));
    pool_->run([&](int thread, int n_parts) {
      float* scratch = scores_.data() + thread * a.scratch_floats;
      float* partials = partials_.data() + thread * max_tiles * part;
      const Range pairs = split_range(n_pairs, 1, thread, n_parts);
      for (int64_t i = pairs.begin; i < pairs.end; ++i) {
        const int64_t t = i / n_groups, g = i % n_groups;
        const int64_t first = first_tile(t), n_tiles = tiles_of(t);
        for (int64_t c = 0; c < n_tiles; ++c) a.tile(t, g, first + c, scratch, partials + c * part);
        a.merge(t, g, partials, n_tiles);
      }
    });
    return;
  }
  tile_base_.resize(size_t(n + 1));
  tile_base_[0] = 0;
  for (int64_t t = 0; t < n; ++t) tile_base_[size_t(t + 1)] = tile_base_[size_t(t)] + n_groups * tiles_of(t);
  const int64_t n_items = tile_base_[size_t(n)];
  partials_.resize(size_t(n_items * part));
  pool_->run([&](int thread, int n_parts) {
    float* scratch = scores_.data() + thread * a.scratch_floats;
    const Range items = split_range(n_items, 1, thread, n_parts);
    int64_t t = 0;
    for (int64_t i = items.begin; i < items.end; ++i) {
      while (tile_base_[size_t(t + 1)] <= i) ++t;
      const int64_t n_tiles = tiles_of(t);
      const int64_t within = i - tile_base_[size_t(t)], g = within / n_tiles, c = within % n_tiles;
      a.tile(t, g, first_tile(t) + c, scratch, partials_.data() + i * part);
    }
  });
  pool_->run([&](int thread, int n_parts) {
    const Range pairs = split_range(n_pairs, 1, thread, n_parts);
    for (int64_t i = pairs.begin; i < pairs.end; ++i) {
      const int64_t t = i / n_groups, g = i % n_groups;
      const int64_t n_tiles = tiles_of(t);
      a.merge(t, g, partials_.data() + (tile_base_[size_t(t)] + g * n_tiles) * part, n_tiles);
    }
  });
}

}  // namespace ridge
