// How the tiles of every token's attention are spread over the threads (kernels/cpu/attention.h).
// Many queries (prefill): each (block of a sequence's consecutive tokens, query group) is one
// part, its tiles computed in order, each read once for the block's tokens whose histories include
// it, into the thread's partials and merged token by token. Few queries over long histories (decode): the tiles
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
  // No positions at all (a KV-parallel rank that keeps none of the token's history yet): no tiles.
  auto tiles_of = [&](int64_t t) {
    const int32_t p = positions_[size_t(t)];
    return p < first_position_[size_t(t)] ? 0 : cpu::attention_tiles(p) - first_tile(t);
  };
  int64_t max_tiles = 1;
  for (int64_t t = 0; t < n; ++t) max_tiles = std::max(max_tiles, tiles_of(t));

  if (max_tiles == 1 || n_pairs >= 2 * n_threads) {
    // Blocks of consecutive tokens of one run read each tile once (a.tiles), as long as there are
    // enough (block, group) parts for every thread.
    const int64_t block = a.tiles ? std::clamp<int64_t>(n_pairs / (2 * n_threads), 1, cpu::kAttentionQueryBlock) : 1;
    block_start_.clear();
    for (int64_t t = 0; t < n; ++t)
      if (t == 0 || run_of_[size_t(t)] != run_of_[size_t(t - 1)] || t - block_start_.back() == block)
        block_start_.push_back(t);
    const auto n_blocks = int64_t(block_start_.size());
    block_start_.push_back(n);
    const int64_t row = (max_tiles + 1) * part;  // a token's tiles, from its block's first tile
    scores_.resize(size_t(n_threads * std::max(a.scratch_floats, a.block_scratch_floats)));
    partials_.resize(size_t(n_threads * block * row));
    pool_->run([&](int thread, int n_parts) {
      float* scratch = scores_.data() + thread * std::max(a.scratch_floats, a.block_scratch_floats);
      float* partials = partials_.data() + thread * block * row;
      const Range parts = split_range(n_blocks * n_groups, 1, thread, n_parts);
      for (int64_t i = parts.begin; i < parts.end; ++i) {
        const int64_t b = i / n_groups, g = i % n_groups;
        const int64_t t0 = block_start_[size_t(b)], t1 = block_start_[size_t(b + 1)];
        if (t1 - t0 == 1) {
          const int64_t first = first_tile(t0), n_tiles = tiles_of(t0);
          for (int64_t c = 0; c < n_tiles; ++c) a.tile(t0, g, first + c, scratch, partials + c * part);
          a.merge(t0, g, partials, n_tiles);
          continue;
        }
        // Tile c is read by the block's tokens whose histories include it: a contiguous few.
        // Its last tile is the last token's, unless that token has none (a KV-parallel rank holding
        // none of its window): then an earlier token's.
        const int64_t block_first = first_tile(t0);
        int64_t block_end = block_first;
        for (int64_t t = t0; t < t1; ++t) block_end = std::max(block_end, first_tile(t) + tiles_of(t));
        int64_t ta = t0, tb = t0;
        for (int64_t c = block_first; c < block_end; ++c) {
          while (tb < t1 && first_tile(tb) <= c) ++tb;
          while (first_tile(ta) + tiles_of(ta) <= c) ++ta;
          a.tiles(ta, tb - ta, g, c, scratch, partials + (ta - t0) * row + (c - block_first) * part, row);
        }
        for (int64_t t = t0; t < t1; ++t)
          a.merge(t, g, partials + (t - t0) * row + (first_tile(t) - block_first) * part, tiles_of(t));
      }
    });
    return;
  }
  scores_.resize(size_t(n_threads * a.scratch_floats));
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
