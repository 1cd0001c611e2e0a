#pragma once
// The KV pool inside the process's memory limit (core/memory_limit.h). Under a cgroup limit
// tighter than what the pool asks for, the pool shrinks to what fits beside the memory already
// resident and a reserve (a step's scratch, HTTP bodies, the tiers' queues); when that holds less
// than one full context, requests are held to what it holds: a longer prompt is refused (503 with
// the numbers) instead of the kernel killing the server later. Each submission also checks what is
// in use against the limit: within max(16 MiB, 1/64 of it) of the limit, the request gets 503.
#include <cstdint>
#include <string>

#include "core/memory_limit.h"

namespace ridge {

struct MemoryBudget {
  MemoryLimit limit;
  int64_t resident_at_start = 0;  // memory_in_use when the engine was made
  int64_t reserve = 0;         // kept free beside the pool
  int64_t asked_kv_bytes = 0;  // the pool's budget before the limit lowered it (0: not lowered)
  int64_t kv_bytes = 0;        // ... and after
  int64_t context = 0;         // tokens one request may hold, prompt and output (0: the configured context)

  bool lowered() const { return asked_kv_bytes > 0; }
  // Lowers the pool's budget `kv_bytes` to fit; false when not even `min_bytes` fits (the caller fails).
  bool fit_pool(int64_t& kv_bytes, int64_t min_bytes);
  // Why a request with an n_prompt-token prompt cannot be taken now (empty: it can). Reads the
  // resident set under a cgroup limit.
  std::string refuse(int64_t n_prompt) const;
  std::string describe() const;  // the start-up line, when the limit lowered the pool
};

// The limit and the resident set now, with the reserve it implies.
MemoryBudget measure_memory_budget();

}  // namespace ridge
