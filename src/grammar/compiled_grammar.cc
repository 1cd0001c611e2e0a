#include "grammar/compiled_grammar.h"

#include <algorithm>

#include <fmt/format.h>

#include "grammar/pda.h"

namespace ridge::grammar {

TokenSet::TokenSet(std::vector<int32_t> members, int32_t n_vocab) : count_(members.size()), n_vocab_(n_vocab) {
  const size_t words = (static_cast<size_t>(n_vocab) + 63) / 64;
  if (members.size() * 4 <= words * 8) {
    form_ = Form::kMembers;
    std::sort(members.begin(), members.end());
    list_ = std::move(members);
  } else {
    form_ = Form::kBits;
    bits_.assign(words, 0);
    for (int32_t t : members) bits_[t >> 6] |= uint64_t{1} << (t & 63);
  }
}

void TokenSet::or_into(uint64_t* words) const {
  switch (form_) {
    case Form::kMembers:
      for (int32_t t : list_) words[t >> 6] |= uint64_t{1} << (t & 63);
      break;
    case Form::kBits:
      for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
      break;
  }
}

bool TokenSet::contains(int32_t token) const {
  switch (form_) {
    case Form::kMembers: return std::binary_search(list_.begin(), list_.end(), token);
    case Form::kBits: return (bits_[token >> 6] >> (token & 63)) & 1;
  }
  return false;
}

namespace {

// Walks the trie from `start` (a state over the sentinel) and sorts every token (see the header).
PositionTokens sort_tokens(Pda& pda, Pda::StateId start, const TokenVocab& vocab) {
  const auto& trie = vocab.trie();
  const auto& trie_tokens = vocab.trie_tokens();
  PositionTokens out;
  std::vector<int32_t> accepted;
  // Per depth on the current branch: the state after that many bytes, and the depths at which the
  // position's frame had completed.
  std::vector<Pda::StateId> state(1, start);
  std::vector<uint16_t> pops;  // depths, ascending, on the current branch
  const ByteSet first = pda.next_bytes(state[0]);
  for (int b = 0; b < 256; ++b) {
    if (!first.has(static_cast<uint8_t>(b))) continue;
    const int32_t child = vocab.root_child(static_cast<uint8_t>(b));
    if (child < 0) continue;
    const int32_t end = trie[child].subtree_end;
    pops.clear();
    for (int32_t i = child; i < end;) {
      const auto& node = trie[i];
      const int d = node.depth;
      while (!pops.empty() && pops.back() >= d) pops.pop_back();
      if (state.size() <= static_cast<size_t>(d)) state.resize(d + 1);
      const Pda::StateId s = pda.step(state[d - 1], node.byte);
      if (s == Pda::kDead) {
        if (!pops.empty()) {
          // Every token below depends on the caller, from each completion point on the branch.
          for (int32_t j = i; j < node.subtree_end; ++j)
            for (int32_t t = 0; t < trie[j].n_tokens; ++t)
              for (uint16_t k : pops) {
                out.dependent_tokens.push_back(trie_tokens[trie[j].first_token + t]);
                out.dependent_offsets.push_back(k);
              }
        }
        i = node.subtree_end;
        continue;
      }
      state[d] = s;
      for (int32_t t = 0; t < node.n_tokens; ++t) accepted.push_back(trie_tokens[node.first_token + t]);
      if (pda.popped(s)) pops.push_back(static_cast<uint16_t>(d));
      ++i;
    }
  }
  // A token accepted inside the rule needs no run-time check from another completion point.
  if (!out.dependent_tokens.empty()) {
    std::vector<bool> in(vocab.n_vocab(), false);
    for (int32_t t : accepted) in[t] = true;
    size_t w = 0;
    for (size_t r = 0; r < out.dependent_tokens.size(); ++r)
      if (!in[out.dependent_tokens[r]]) {
        out.dependent_tokens[w] = out.dependent_tokens[r];
        out.dependent_offsets[w++] = out.dependent_offsets[r];
      }
    out.dependent_tokens.resize(w);
    out.dependent_offsets.resize(w);
  }
  out.accepted = TokenSet(std::move(accepted), vocab.n_vocab());
  return out;
}

// What sorting the tokens from `chain` depends on, spelled canonically: the rest of each frame's
// alternative and the rules reachable from there, numbered in the order first met -- but only the
// rules a token can enter, those fewer than `horizon` bytes (the longest token) away; farther
// references are spelled as cut. Two chains with the same spelling sort every token the same way,
// in any grammar: a string of at most 200 characters looks the same from its 10th character as
// from its 100th to a token of at most 64 bytes. The top frame and the frames below it are spelled
// apart (each as if it began the token: the pair still fixes the sort), so one spelling of the
// frames below serves every stack that shares them -- the many alternatives a closure opens.
std::string chain_key(const FlatGrammar& g, const int32_t* chain, size_t n_chain, int32_t horizon) {
  // Fewest bytes read before each reachable rule is entered (Dijkstra over alternatives' prefixes).
  std::unordered_map<int32_t, int32_t> dist;
  using Item = std::pair<int32_t, int32_t>;  // (bytes before, position)
  std::vector<Item> heap;
  auto push = [&](int32_t d, int32_t pos) {
    heap.emplace_back(d, pos);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  {
    int32_t d = 0;
    for (size_t i = 0; i < n_chain; ++i) {
      const int32_t pos = chain[i];
      push(d, pos);
      // The next frame resumes once this one's alternative ends: at least its remaining bytes on.
      for (int32_t p = pos; g.elems[p].kind != FlatGrammar::Kind::kEnd; ++p)
        d += g.elems[p].kind == FlatGrammar::Kind::kBytes ? 1 : g.min_bytes[g.elems[p].arg];
    }
  }
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    auto [d, pos] = heap.back();
    heap.pop_back();
    for (int32_t p = pos; d <= horizon && g.elems[p].kind != FlatGrammar::Kind::kEnd; ++p) {
      const FlatGrammar::Elem& e = g.elems[p];
      if (e.kind == FlatGrammar::Kind::kRule) {
        auto [it, added] = dist.try_emplace(e.arg, d);
        if (added || d < it->second) {
          it->second = d;
          for (int32_t start : g.alt_starts[e.arg]) push(d, start);
        }
        d += g.min_bytes[e.arg];
      } else {
        ++d;
      }
    }
  }
  std::string key;
  std::unordered_map<int32_t, int32_t> local;
  std::vector<int32_t> queue;
  auto put = [&](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  auto spell_from = [&](int32_t pos) {
    for (;; ++pos) {
      const FlatGrammar::Elem& e = g.elems[pos];
      if (e.kind == FlatGrammar::Kind::kEnd) {
        key.push_back('E');
        return;
      }
      if (e.kind == FlatGrammar::Kind::kBytes) {
        key.push_back('B');
        put(g.sets[e.arg].words.data(), 32);
        continue;
      }
      auto d = dist.find(e.arg);
      if (d == dist.end() || d->second > horizon) {
        key.push_back('X');
        continue;
      }
      auto [it, added] = local.try_emplace(e.arg, static_cast<int32_t>(local.size()));
      if (added) queue.push_back(e.arg);
      key.push_back('R');
      put(&it->second, 4);
    }
  };
  for (size_t i = 0; i < n_chain; ++i) spell_from(chain[i]);
  for (size_t i = 0; i < queue.size(); ++i) {
    key.push_back('[');
    for (int32_t start : g.alt_starts[queue[i]]) spell_from(start);
  }
  return key;
}

// 128 bits standing for a spelling (two independent 64-bit hashes): keys of the shared cache stay
// short however long the spelling.
std::string fingerprint(const std::string& spelling) {
  uint64_t fnv = 0xcbf29ce484222325ULL;
  for (unsigned char c : spelling) fnv = (fnv ^ c) * 0x100000001b3ULL;
  const uint64_t h[2] = {std::hash<std::string>{}(spelling), fnv ^ spelling.size()};
  return std::string(reinterpret_cast<const char*>(h), sizeof(h));
}

// Sorted tokens of canonical chains, for every grammar of every vocabulary in the process.
class SharedChainCache {
 public:
  static SharedChainCache& get() {
    static SharedChainCache cache;
    return cache;
  }
  std::shared_ptr<const PositionTokens> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  void put(const std::string& key, std::shared_ptr<const PositionTokens> tokens) {
    const size_t bytes = key.size() + tokens->accepted.memory_bytes() + tokens->dependent_tokens.size() * 6 + 64;
    std::lock_guard lock(mutex_);
    if (bytes_ + bytes > kMaxBytes) {  // a crude bound: entries are cheap to recompute
      map_.clear();
      bytes_ = 0;
    }
    if (map_.emplace(key, std::move(tokens)).second) bytes_ += bytes;
  }

 private:
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const PositionTokens>> map_;
  size_t bytes_ = 0;
};

}  // namespace

CompiledGrammar::CompiledGrammar(const Grammar& grammar, std::shared_ptr<const TokenVocab> vocab,
                                 const CompileLimits& limits)
    : flat_(std::make_shared<const FlatGrammar>(FlatGrammar::from(grammar))), vocab_(std::move(vocab)) {
  const auto start = std::chrono::steady_clock::now();
  Pda pda(flat_);
  pda.initial();  // refuses an exploding start before any work
  positions_.resize(flat_->n_positions());
  for (int32_t pos = 0; pos < flat_->n_positions(); ++pos) {
    if (flat_->elems[pos].kind != FlatGrammar::Kind::kBytes || flat_->lexical_at(pos)) continue;
    positions_[pos] = std::make_shared<const PositionTokens>(sort_tokens(pda, pda.start_at(pos), *vocab_));
    if (std::chrono::steady_clock::now() - start > limits.timeout)
      throw GrammarError(fmt::format("grammar: compiling took over {} ms (a grammar of {} positions); simplify it",
                                     limits.timeout.count(), flat_->n_positions()));
  }
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::shared_ptr<const PositionTokens> CompiledGrammar::tokens_for(const std::vector<int32_t>& chain) const {
  if (chain.size() == 1 && positions_[chain[0]]) return positions_[chain[0]];
  const std::string own_key(reinterpret_cast<const char*>(chain.data()), chain.size() * sizeof(int32_t));
  {
    std::lock_guard lock(mutex_);
    if (auto it = chains_.find(own_key); it != chains_.end()) return it->second;
  }
  const int32_t horizon = vocab_->max_token_bytes();
  std::string shared_key = std::to_string(vocab_->id()) + ":";
  {
    std::lock_guard lock(mutex_);
    auto [top, top_added] = spelled_.try_emplace(std::string(own_key, 0, sizeof(int32_t)));
    if (top_added) top->second = fingerprint(chain_key(*flat_, chain.data(), 1, horizon));
    shared_key += top->second;
    auto [below, below_added] = spelled_.try_emplace(own_key.substr(sizeof(int32_t)) + "b");
    if (below_added) below->second = fingerprint(chain_key(*flat_, chain.data() + 1, chain.size() - 1, horizon));
    shared_key += below->second;
  }
  std::shared_ptr<const PositionTokens> tokens = SharedChainCache::get().find(shared_key);
  if (!tokens) {
    std::lock_guard walk_lock(walk_mutex_);
    if (!walk_pda_) walk_pda_ = std::make_unique<Pda>(flat_);
    tokens = std::make_shared<const PositionTokens>(sort_tokens(*walk_pda_, walk_pda_->start_chain(chain), *vocab_));
    SharedChainCache::get().put(shared_key, tokens);
  }
  std::lock_guard lock(mutex_);
  chains_.emplace(own_key, tokens);
  return tokens;
}

size_t CompiledGrammar::memory_bytes() const {
  size_t total = 0;
  auto add = [&](const std::shared_ptr<const PositionTokens>& p) {
    if (p) total += p->accepted.memory_bytes() + p->dependent_tokens.size() * 6;
  };
  for (const auto& p : positions_) add(p);
  std::lock_guard lock(mutex_);
  for (const auto& [key, p] : chains_) add(p);
  return total;
}

}  // namespace ridge::grammar
