#pragma once
// `ridge bench kv-transfer`: the KV transport's own limit, the figure a disaggregated transfer is
// compared with. Two transports in this process (so UCX runs between two workers as between two
// processes on one host: shared memory), one region of the receiver filled by puts of one size
// after another, each pass ended by the note; bytes over time from the first put to the note.
#include <cstdint>
#include <string>
#include <vector>

namespace ridge::bench {

struct KvTransferResult {
  int64_t put_bytes = 0;   // bytes per put (a coalesced run of blocks in one layer)
  int64_t total_bytes = 0; // per pass
  double gbs = 0;          // best pass
  double mean_gbs = 0;
};

std::vector<KvTransferResult> run_kv_transfer_bench(const std::string& transport, int64_t region_bytes,
                                                    const std::vector<int64_t>& put_sizes, int passes);

}  // namespace ridge::bench
