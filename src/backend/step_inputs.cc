#include "backend/step_inputs.h"

#include <algorithm>

#include "core/error.h"

namespace ridge {

bool is_decode_batch(const TokenBatch& batch) {
  return !batch.runs.empty() &&
         std::all_of(batch.runs.begin(), batch.runs.end(), [](const SequenceRun& r) { return r.n_tokens == 1; });
}

StepInputs build_step_inputs(const TokenBatch& batch, int32_t block_size, int32_t n_blocks, int64_t n_vocab,
                             int64_t pad_to) {
  StepInputs in;
  const auto n = int64_t(batch.tokens.size());
  const int64_t total = std::max(n, pad_to);
  in.n_real = n;
  in.tokens.reserve(size_t(total));
  in.positions.reserve(size_t(total));
  in.slots.reserve(size_t(total));
  in.table_offsets.reserve(size_t(total));
  int64_t t = 0;
  for (const SequenceRun& run : batch.runs) {
    if (run.n_tokens <= 0 || run.first_position < 0) fail("a sequence run needs tokens and a position >= 0");
    const int64_t end = run.first_position + run.n_tokens;
    const int64_t used = (end + block_size - 1) / block_size;
    if (int64_t(run.blocks.size()) < used)
      fail("{} KV blocks of {} tokens cannot hold position {}", run.blocks.size(), block_size, end - 1);
    for (int64_t b = 0; b < used; ++b)
      if (run.blocks[size_t(b)] < 0 || run.blocks[size_t(b)] >= n_blocks)
        fail("KV block {} is outside the pool of {}", run.blocks[size_t(b)], n_blocks);
    if (t + run.n_tokens > n) fail("the batch has {} tokens but its runs cover more", n);
    in.kv_positions += end;
    const auto offset = int32_t(in.tables.size());
    in.tables.insert(in.tables.end(), run.blocks.begin(), run.blocks.begin() + used);
    for (int64_t i = 0; i < run.n_tokens; ++i, ++t) {
      const auto p = int32_t(run.first_position + i);
      const int32_t id = batch.tokens[size_t(t)];
      if (id < 0 || id >= n_vocab) fail("token id {} is outside the vocabulary of {}", id, n_vocab);
      in.tokens.push_back(id);
      in.positions.push_back(p);
      in.slots.push_back(run.blocks[size_t(p / block_size)] * block_size + p % block_size);
      in.table_offsets.push_back(offset);
      in.max_position = std::max(in.max_position, p);
      in.attended += int64_t(p) + 1;
    }
    if (run.logits == LogitsWanted::All)
      for (int64_t i = 0; i < run.n_tokens; ++i) in.logit_rows.push_back(int32_t(t - run.n_tokens + i));
    else if (run.logits == LogitsWanted::Last)
      in.logit_rows.push_back(int32_t(t - 1));
  }
  if (t == 0) fail("forward needs at least one token");
  if (t != n) fail("the batch has {} tokens but its runs cover {}", n, t);
  if (total > n) {
    const auto pad_table = int32_t(in.tables.size());
    in.tables.push_back(0);
    for (int64_t i = n; i < total; ++i) {
      in.tokens.push_back(0);
      in.positions.push_back(0);
      in.slots.push_back(-1);
      in.table_offsets.push_back(pad_table);
    }
  }
  return in;
}

}  // namespace ridge
