#pragma once
// The integers one forward step needs on a device besides its activations, laid out on the host:
// each token's id, position, KV slot and block-table offset, the runs' block tables side by side,
// and which tokens' logits are wanted. A decode step replayed in a CUDA graph is padded to its
// bucket: padding tokens have id 0, position 0, slot -1 (no KV write) and a table of block 0.
#include <cstdint>
#include <vector>

#include "model/token_batch.h"

namespace ridge {

struct StepInputs {
  std::vector<int32_t> tokens;         // (n) ids
  std::vector<int32_t> positions;      // (n)
  std::vector<int32_t> slots;          // (n) block * block_size + slot; -1 writes nothing
  std::vector<int32_t> table_offsets;  // (n) where the token's block table starts in `tables`
  std::vector<int32_t> tables;         // every run's blocks 0 .. its last position's, run after run
  std::vector<int32_t> logit_rows;     // tokens whose logits are wanted, in run order
  int64_t n_real = 0;                  // tokens before padding
  int32_t max_position = 0;            // over the real tokens
  int64_t attended = 0;                // Σ (position + 1) over the real tokens: attention's work
  int64_t kv_positions = 0;            // Σ over runs of their last position + 1: the K/V rows read

  int64_t n_tokens() const { return int64_t(tokens.size()); }
};

// True when every run is a single token (a decode step).
bool is_decode_batch(const TokenBatch& batch);

// pad_to: total tokens after padding (>= the batch's tokens; 0 = no padding). Error, as
// ModelForward's, when a run is empty or starts before 0, its blocks do not cover its positions or
// lie outside the pool of n_blocks, a token id is outside n_vocab, or the runs do not cover the tokens.
StepInputs build_step_inputs(const TokenBatch& batch, int32_t block_size, int32_t n_blocks, int64_t n_vocab,
                             int64_t pad_to = 0);

}  // namespace ridge
