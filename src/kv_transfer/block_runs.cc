#include "kv_transfer/block_runs.h"

#include "core/error.h"

namespace ridge::kvx {

std::vector<BlockRun> coalesce_blocks(std::span<const BlockId> src, std::span<const BlockId> dst) {
  if (src.size() != dst.size()) fail("KV transfer: {} source blocks for {} destination blocks", src.size(), dst.size());
  std::vector<BlockRun> runs;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!runs.empty()) {
      BlockRun& last = runs.back();
      if (src[i] == last.src + last.n && dst[i] == last.dst + last.n) {
        ++last.n;
        continue;
      }
    }
    runs.push_back({src[i], dst[i], 1});
  }
  return runs;
}

}  // namespace ridge::kvx
