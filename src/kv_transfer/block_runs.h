#pragma once
// The descriptor list of a transfer: the request's blocks on the sending side paired with the
// blocks reserved on the receiving side, coalesced into runs that are contiguous on both, so a
// run of n blocks is one byte range per layer (and one of scales) however many blocks it holds.
#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_pool.h"

namespace ridge::kvx {

struct BlockRun {
  BlockId src = 0;
  BlockId dst = 0;
  int32_t n = 0;
};

// src[i] goes to dst[i]; both the same length.
std::vector<BlockRun> coalesce_blocks(std::span<const BlockId> src, std::span<const BlockId> dst);

}  // namespace ridge::kvx
