#pragma once
// What one engine step computes: for each scheduled request, a run of consecutive positions.
// A prefill chunk and a decode token are the same thing here (a decode is a run of one), so the
// runner packs them all into one ragged forward pass. Plain ids and counts; the runner builds the
// tensors (token ids, positions, slot mappings from the KV manager's block tables).
#include <cstdint>
#include <vector>

#include "kv/block_pool.h"

namespace ridge {

using RequestId = int64_t;

struct ScheduledRequest {
  RequestId id = 0;
  int64_t first_position = 0;  // the request's first token computed this step
  int64_t n_tokens = 0;        // positions first_position .. first_position + n_tokens - 1
  bool samples = false;        // the run ends at the request's last token: sample the next one
  int64_t n_draft = 0;         // speculative: the run's last n_draft positions are proposed tokens,
                               // verified from the logits of its last n_draft + 1 positions
  std::vector<BlockCopy> copies;  // copy-on-write: copy these blocks before the forward pass
};

// Disaggregated: a request admitted with blocks reserved for positions first_position ..
// first_position + n_tokens - 1, which another instance fills (engine/kv_handoff.h).
struct RemotePrefillStart {
  RequestId id = 0;
  int64_t first_position = 0;
  int64_t n_tokens = 0;
};

struct StepPlan {
  std::vector<ScheduledRequest> requests;  // decodes first, then prefill chunks, then admissions
  std::vector<RemotePrefillStart> remote_prefills;  // admitted this step to wait for their K/V
  std::vector<RemotePrefillStart> tier_loads;       // ... to wait for blocks loaded from a tier below the pool
  std::vector<RequestId> preempted;        // sent back to waiting this step; their blocks are free
  int64_t n_tokens = 0;                    // sum of n_tokens: never above max_batched_tokens

  bool empty() const { return requests.empty(); }
};

}  // namespace ridge
