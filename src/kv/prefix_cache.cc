#include "kv/prefix_cache.h"

#include <algorithm>

namespace ridge {

namespace {
// splitmix64's finaliser: every input bit moves every output bit.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t PrefixCache::chain_hash(uint64_t parent, std::span<const int32_t> block_tokens) {
  uint64_t h = mix(parent ^ 0x5851f42d4c957f2dULL);
  for (int32_t t : block_tokens) h = mix(h ^ static_cast<uint32_t>(t));
  return h == kNoParent ? 1 : h;  // kNoParent stays reserved for "no previous block"
}

std::optional<BlockId> PrefixCache::find(uint64_t hash, std::span<const int32_t> block_tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  if (!std::equal(block_tokens.begin(), block_tokens.end(), it->second.tokens.begin(), it->second.tokens.end()))
    return std::nullopt;
  return it->second.block;
}

bool PrefixCache::insert(uint64_t hash, std::span<const int32_t> block_tokens, BlockId block, uint64_t parent) {
  if (by_hash_.contains(hash) || hash_of_block_.contains(block)) return false;
  by_hash_.emplace(hash, Entry{block, std::vector<int32_t>(block_tokens.begin(), block_tokens.end()), parent});
  hash_of_block_.emplace(block, hash);
  return true;
}

std::optional<uint64_t> PrefixCache::erase_block(BlockId block) {
  std::optional<Erased> e = take_block(block);
  if (!e) return std::nullopt;
  return e->hash;
}

std::optional<PrefixCache::Erased> PrefixCache::take_block(BlockId block) {
  auto it = hash_of_block_.find(block);
  if (it == hash_of_block_.end()) return std::nullopt;
  const uint64_t hash = it->second;
  auto entry = by_hash_.find(hash);
  Erased e{hash, entry->second.parent, std::move(entry->second.tokens)};
  by_hash_.erase(entry);
  hash_of_block_.erase(it);
  return e;
}

PrefixCache::Match PrefixCache::longest_prefix(std::span<const int32_t> tokens, int64_t max_tokens, uint64_t root) {
  Match match;
  match.last_hash = root;
  const int64_t limit = std::min<int64_t>(max_tokens, static_cast<int64_t>(tokens.size()));
  const int64_t n_full = limit / block_size_;
  query_tokens_ += n_full * block_size_;
  for (int64_t i = 0; i < n_full; ++i) {
    std::span<const int32_t> block_tokens = tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_));
    uint64_t hash = chain_hash(match.last_hash, block_tokens);
    std::optional<BlockId> block = find(hash, block_tokens);
    if (!block) break;
    match.blocks.push_back(*block);
    match.last_hash = hash;
  }
  hit_tokens_ += static_cast<int64_t>(match.blocks.size()) * block_size_;
  return match;
}

}  // namespace ridge
