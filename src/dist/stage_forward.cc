#include "dist/stage_forward.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/log.h"
#include "model/shard.h"

namespace ridge::dist {
namespace {

constexpr int kLogitsTag = 1 << 20;  // above every piece's tag

// Adds the scope's wall time to `total`.
class Timed {
 public:
  explicit Timed(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Timed() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int32_t kv_block_share(const Model& shard_model, int32_t block_size, const Parallel& parallel) {
  if (!shard_model.shard || !shard_model.shard->request.helix) return block_size;
  const int n = parallel.sizes.tp;
  if (block_size % n != 0) fail("--helix {}: the KV block size {} must be a multiple of {}", n, block_size, n);
  return block_size / n;
}

std::vector<BatchPiece> cut_batch(const TokenBatch& batch, int pieces, int64_t min_tokens) {
  const auto total = int64_t(batch.tokens.size());
  const int64_t target = std::max(min_tokens, (total + pieces - 1) / std::max(pieces, 1));
  std::vector<BatchPiece> out(1);
  int64_t t = 0;
  for (const SequenceRun& run : batch.runs) {
    for (int64_t done = 0; done < run.n_tokens;) {
      if (int64_t(out.back().tokens.size()) >= target) out.emplace_back();
      BatchPiece& p = out.back();
      const int64_t take = std::min(run.n_tokens - done, target - int64_t(p.tokens.size()));
      const bool last = done + take == run.n_tokens;
      LogitsWanted wanted = run.logits;
      if (wanted == LogitsWanted::Last && !last) wanted = LogitsWanted::None;
      p.tokens.insert(p.tokens.end(), batch.tokens.begin() + t + done, batch.tokens.begin() + t + done + take);
      p.runs.push_back({take, run.first_position + done, run.blocks, wanted, run.prompt_end});
      done += take;
    }
    t += run.n_tokens;
  }
  return out;
}

StageForward::StageForward(const Model& shard_model, const PagedForwardConfig& c, Parallel& parallel)
    : model_(shard_model), parallel_(parallel), forward_(shard_model, c.n_threads),
      store_(forward_.kv_layout(kv_block_share(shard_model, c.block_size, parallel), c.n_blocks, c.kv_dtype)) {
  if (!shard_model.shard) fail("a rank of a split model needs its shard");
  Communicator& tp = *parallel.tp_group;
  if (shard_model.shard->request.helix) forward_.set_kv_parallel({tp.rank(), tp.size()});
  forward_.set_tensor_parallel({[this, &tp](float* data, int64_t n) {
                                  Timed t(collective_s_[kind_]);
                                  tp.all_reduce_sum(data, n);
                                },
                                [this](const float* local, int64_t rows, const Partition& parts, float* full) {
                                  gather_columns(local, rows, parts, full);
                                },
                                [this](const float* local, std::span<const int64_t> rows, int64_t width, float* full) {
                                  gather_rows(local, rows, width, full);
                                },
                                [this, &tp](const void* send, std::span<const int64_t> sb, std::span<const int64_t> so,
                                            void* recv, std::span<const int64_t> rb, std::span<const int64_t> ro) {
                                  Timed t(collective_s_[kind_]);
                                  tp.all_to_all_v(send, sb, so, recv, rb, ro);
                                }});
}

// Each rank's (rows, its columns) block, gathered, then laid side by side row by row.
StageForward::~StageForward() {
  // On request only (RIDGE_DIST_STATS=1): a line after a command's own output would break its readers.
  if (parallel_.tp_group->size() == 1 || !std::getenv("RIDGE_DIST_STATS")) return;
  auto per_step = [&](int k) { return steps_[k] ? 1e3 * collective_s_[k] / double(steps_[k]) : 0.0; };
  log_info("rank {}: in the tensor-parallel group's collectives {:.3f} ms a decode step ({} steps), {:.3f} ms another step ({})",
           parallel_.rank, per_step(0), steps_[0], per_step(1), steps_[1]);
}

void StageForward::gather_columns(const float* local, int64_t rows, const Partition& parts, float* full) {
  Timed t(collective_s_[kind_]);
  Communicator& tp = *parallel_.tp_group;
  counts_.clear();
  for (const Slice& p : parts.parts) counts_.push_back(rows * p.count * 4);
  const int64_t width = parts.total();
  if (rows == 1) return tp.all_gather_v(local, counts_[size_t(tp.rank())], full, counts_);
  blocks_.resize(size_t(rows * width));
  tp.all_gather_v(local, counts_[size_t(tp.rank())], blocks_.data(), counts_);
  const float* block = blocks_.data();
  for (const Slice& p : parts.parts) {
    for (int64_t i = 0; i < rows; ++i) std::memcpy(full + i * width + p.begin, block + i * p.count, size_t(p.count) * 4);
    block += rows * p.count;
  }
}

void StageForward::gather_rows(const float* local, std::span<const int64_t> rows, int64_t width, float* full) {
  Timed t(collective_s_[kind_]);
  Communicator& tp = *parallel_.tp_group;
  counts_.clear();
  for (int64_t r : rows) counts_.push_back(r * width * 4);
  tp.all_gather_v(local, counts_[size_t(tp.rank())], full, counts_);
}

// Data-parallel attention: a sequence belongs to the rank its first KV block names (blocks are
// the block manager's, the same on every rank, and a shared prefix's first block goes with it),
// so its KV stays on one rank from step to step.
void StageForward::forward_data_parallel(const TokenBatch& batch, std::vector<float>& logits) {
  Communicator& tp = *parallel_.tp_group;
  const int T = tp.size();
  auto owner = [&](const SequenceRun& run) { return int(run.blocks[0] % T); };
  auto rows_of = [](const SequenceRun& run) {
    return run.logits == LogitsWanted::All ? run.n_tokens : run.logits == LogitsWanted::Last ? 1 : 0;
  };
  local_.tokens.clear();
  local_.runs.clear();
  std::vector<int64_t> rows(size_t(T), 0);
  for (int64_t r = 0, t = 0; r < int64_t(batch.runs.size()); t += batch.runs[size_t(r)].n_tokens, ++r) {
    const SequenceRun& run = batch.runs[size_t(r)];
    rows[size_t(owner(run))] += rows_of(run);
    if (owner(run) != tp.rank()) continue;
    local_.tokens.insert(local_.tokens.end(), batch.tokens.begin() + t, batch.tokens.begin() + t + run.n_tokens);
    local_.runs.push_back(run);
  }
  forward_.run_layers(local_.batch(), store_, nullptr);
  forward_.project(local_.batch(), piece_logits_);
  const int64_t n_vocab = model_.spec.n_vocab;
  counts_.clear();
  for (int64_t n : rows) counts_.push_back(n * n_vocab * 4);
  if (tp.rank() == 0) blocks_.resize(size_t(logits_rows(batch) * n_vocab));
  tp.gather_v(piece_logits_.data(), counts_[size_t(tp.rank())], blocks_.data(), counts_, 0);
  if (tp.rank() != 0) return;
  // Each rank's rows, back in the batch's run order.
  std::vector<int64_t> next(size_t(T), 0);
  for (int r = 1; r < T; ++r) next[size_t(r)] = next[size_t(r - 1)] + rows[size_t(r - 1)];
  logits.resize(blocks_.size());
  int64_t out = 0;
  for (const SequenceRun& run : batch.runs) {
    const int64_t n = rows_of(run);
    int64_t& from = next[size_t(owner(run))];
    std::copy_n(blocks_.data() + from * n_vocab, n * n_vocab, logits.data() + out * n_vocab);
    from += n;
    out += n;
  }
}

void StageForward::forward(const TokenBatch& batch, std::vector<float>& logits) {
  kind_ = batch.tokens.size() == batch.runs.size() ? 0 : 1;
  ++steps_[kind_];
  if (model_.shard->dp_attention()) return forward_data_parallel(batch, logits);
  if (parallel_.sizes.pp == 1) {
    forward_.forward(batch, store_, logits);
    return;
  }
  forward_pipelined(batch, logits);
}

void StageForward::forward_pipelined(const TokenBatch& batch, std::vector<float>& logits) {
  const Parallel& p = parallel_;
  Communicator& world = *p.world;
  const int64_t d = model_.spec.n_embd, n_vocab = model_.spec.n_vocab;
  const bool first = p.stage == 0, last = p.stage == p.sizes.pp - 1;
  // As many pieces as stages keeps every stage busy once the pipeline is full; pieces below 16
  // tokens cost more in messages than they win, so small batches go whole.
  // By default one piece per stage, and pieces of at most kPieceTokens for long prompts: a later
  // chunk attends over more positions, so equal halves of a long prompt leave the stages unbalanced
  // (bench/parallel_side_by_side.py: PP=2 over 2,048 tokens, 2 pieces 1.22x one piece, 8 pieces 1.56x).
  constexpr int64_t kPieceTokens = 256;
  const int n_pieces = p.sizes.microbatches > 0
                           ? p.sizes.microbatches
                           : int(std::max<int64_t>(p.sizes.pp, int64_t(batch.tokens.size()) / kPieceTokens));
  const std::vector<BatchPiece> pieces = cut_batch(batch, n_pieces, 16);
  const int last_root = p.world_rank(p.sizes.pp - 1, 0);
  std::vector<float>& out = p.rank == last_root ? logits : piece_logits_;
  out.clear();
  for (size_t i = 0; i < pieces.size(); ++i) {
    const TokenBatch piece = pieces[i].batch();
    const auto n = int64_t(piece.tokens.size());
    if (!first) {
      x_in_.resize(size_t(n * d));
      world.recv(x_in_.data(), n * d * 4, p.world_rank(p.stage - 1, p.tp_rank), int(i));
    }
    forward_.run_layers(piece, store_, first ? nullptr : x_in_.data());
    if (!last) {
      world.send(forward_.residual().data(), n * d * 4, p.world_rank(p.stage + 1, p.tp_rank), int(i));
      continue;
    }
    forward_.project(piece, x_in_);
    if (p.tp_rank == 0) out.insert(out.end(), x_in_.begin(), x_in_.end());
  }
  // The logits go to world rank 0 in one message once every piece is through: a send per piece
  // could wait on rank 0 while rank 0 waits to send the next piece.
  const int64_t bytes = logits_rows(batch) * n_vocab * 4;
  if (p.rank == 0) {
    logits.resize(size_t(bytes / 4));
    world.recv(logits.data(), bytes, last_root, kLogitsTag);
  } else if (p.rank == last_root) {
    world.send(logits.data(), bytes, 0, kLogitsTag);
  }
}

}  // namespace ridge::dist
