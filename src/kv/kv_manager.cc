#include "kv/kv_manager.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace ridge {

KvMemoryPlan plan_kv_memory(const KvMemoryInputs& in) {
  KvMemoryPlan plan;
  plan.bytes_per_token = in.bytes_per_token_per_layer * in.n_layer;
  plan.bytes_per_block = plan.bytes_per_token * in.block_size;
  if (plan.bytes_per_block <= 0 || in.budget_bytes <= 0) return plan;
  plan.n_blocks = static_cast<int32_t>(in.budget_bytes / plan.bytes_per_block);
  plan.n_tokens = static_cast<int64_t>(plan.n_blocks) * in.block_size;
  if (in.max_context > 0) {
    // Blocks are per sequence, so a sequence needs whole blocks.
    int64_t blocks_per_seq = (in.max_context + in.block_size - 1) / in.block_size;
    plan.full_context_seqs = plan.n_blocks / blocks_per_seq;
  }
  return plan;
}

KvManager::KvManager(const KvConfig& config)
    : prefix_caching_(config.prefix_caching), pool_(config.n_blocks, config.block_size), prefix_(config.block_size) {}

BlockId KvManager::take_block() {
  std::optional<BlockPool::Allocated> got = pool_.allocate();
  if (!got) throw std::logic_error("KvManager: pool ran out after the free count said it would not");
  if (got->evicted) forget_cached(got->block);
  return got->block;
}

void KvManager::forget_cached(BlockId block) {
  std::optional<PrefixCache::Erased> e = prefix_.take_block(block);
  if (!e) return;
  if (events_) events_->on_blocks_removed(std::span<const uint64_t>(&e->hash, 1));
  if (keep_evictions_) evicted_.push_back({block, e->hash, e->parent, std::move(e->tokens)});
}

int64_t KvManager::lower_tier_blocks(SeqId seq, std::span<const int32_t> tokens, const TierLookup& held) const {
  const SeqBlocks& s = seqs_.at(seq);
  const int64_t bs = block_size();
  const int64_t last = (static_cast<int64_t>(tokens.size()) - 1) / bs;  // leave one token to compute
  uint64_t parent = s.last_hash;
  int64_t n = 0;
  for (int64_t i = static_cast<int64_t>(s.table.size()); i < last; ++i, ++n) {
    std::span<const int32_t> block_tokens = tokens.subspan(static_cast<size_t>(i * bs), static_cast<size_t>(bs));
    const uint64_t hash = PrefixCache::chain_hash(parent, block_tokens);
    if (!held(hash, parent, block_tokens)) break;
    parent = hash;
  }
  return n;
}

int64_t KvManager::match_prefix(SeqId seq, std::span<const int32_t> tokens, uint64_t root) {
  SeqBlocks& s = seqs_[seq];
  if (!s.table.empty()) throw std::logic_error("KvManager::match_prefix: sequence already holds blocks");
  s.last_hash = root;
  if (!prefix_caching_ || tokens.empty()) return 0;
  PrefixCache::Match match = prefix_.longest_prefix(tokens, static_cast<int64_t>(tokens.size()) - 1, root);
  for (BlockId b : match.blocks) pool_.acquire(b);
  s.table = std::move(match.blocks);
  s.n_slots = static_cast<int64_t>(s.table.size()) * block_size();
  s.n_hashed = static_cast<int64_t>(s.table.size());
  s.last_hash = match.last_hash;
  return s.n_slots;
}

KvManager::Allocation KvManager::allocate_for(SeqId seq, int64_t n_new_tokens) {
  SeqBlocks& s = seqs_[seq];
  Allocation result;
  if (n_new_tokens <= 0) {
    result.ok = true;
    return result;
  }
  const int64_t bs = block_size();
  const int64_t have = static_cast<int64_t>(s.table.size());
  const int64_t want = (s.n_slots + n_new_tokens + bs - 1) / bs;
  const bool writes_last_block = s.n_slots % bs != 0;  // the first new token lands in a partial block
  const int64_t cow = writes_last_block ? pool_.blocks_to_write(s.table.back()) : 0;
  if (want - have + cow > pool_.n_free()) return result;

  if (cow > 0) {
    std::optional<BlockPool::WriteTarget> target = pool_.prepare_write(s.table.back());
    if (!target) throw std::logic_error("KvManager: copy-on-write found no block");
    if (target->evicted) forget_cached(target->block);
    s.table.back() = target->block;
    result.copies.push_back(*target->copy);
  }
  for (int64_t i = have; i < want; ++i) s.table.push_back(take_block());
  s.n_slots += n_new_tokens;
  result.ok = true;
  return result;
}

void KvManager::cache_full_blocks(SeqId seq, std::span<const int32_t> tokens, int64_t n_computed) {
  if (!prefix_caching_) return;
  SeqBlocks& s = seqs_.at(seq);
  const int64_t bs = block_size();
  int64_t limit = std::min({n_computed, s.n_slots, static_cast<int64_t>(tokens.size())});
  // The sink hears of each run of consecutive newly keyed blocks (one run unless a block in the
  // middle was already cached by another sequence) as one event.
  std::vector<uint64_t> run;
  std::optional<uint64_t> run_parent;
  int64_t run_first = 0;
  auto report_run = [&] {
    if (run.empty()) return;
    events_->on_blocks_stored(run_parent, run, tokens.subspan(size_t(run_first * bs), run.size() * size_t(bs)),
                              int32_t(bs));
    run.clear();
  };
  for (int64_t i = s.n_hashed; i < limit / bs; ++i) {
    std::span<const int32_t> block_tokens = tokens.subspan(static_cast<size_t>(i * bs), static_cast<size_t>(bs));
    uint64_t hash = PrefixCache::chain_hash(s.last_hash, block_tokens);
    BlockId block = s.table[static_cast<size_t>(i)];
    // A second copy of an already cached prefix stays private and is freed normally.
    const bool keyed = !pool_.is_cached(block) && prefix_.insert(hash, block_tokens, block, s.last_hash);
    if (keyed) pool_.mark_cached(block);
    if (events_ && !keyed) report_run();
    if (events_ && keyed) {
      if (run.empty()) {
        run_first = i;
        run_parent = s.last_hash == PrefixCache::kNoParent ? std::nullopt : std::optional<uint64_t>(s.last_hash);
      }
      run.push_back(hash);
    }
    s.last_hash = hash;
    s.n_hashed = i + 1;
  }
  if (events_) report_run();
}

void KvManager::fork(SeqId parent, SeqId child) {
  const SeqBlocks& p = seqs_.at(parent);
  if (seqs_.contains(child)) throw std::logic_error("KvManager::fork: child already exists");
  for (BlockId b : p.table) pool_.acquire(b);
  SeqBlocks copy = p;
  seqs_.emplace(child, std::move(copy));
}

void KvManager::truncate(SeqId seq, int64_t n_slots) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end() || n_slots >= it->second.n_slots) return;
  SeqBlocks& s = it->second;
  const auto keep = size_t((n_slots + block_size() - 1) / block_size());
  if (keep < size_t(s.n_hashed)) throw std::logic_error("KvManager: truncating into cached blocks");
  while (s.table.size() > keep) {
    pool_.release(s.table.back());
    s.table.pop_back();
  }
  s.n_slots = n_slots;
}

void KvManager::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  // Tail first: the tail is the least likely to be shared, so it should be evicted first.
  for (auto b = it->second.table.rbegin(); b != it->second.table.rend(); ++b) pool_.release(*b);
  seqs_.erase(it);
}

std::span<const BlockId> KvManager::block_table(SeqId seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return {};
  return it->second.table;
}

int64_t KvManager::n_slots(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : it->second.n_slots;
}

}  // namespace ridge
