#include "grammar/compiled_grammar.h"

#include <algorithm>

#include <fmt/format.h>

#include "grammar/pda.h"
#include "grammar/token_sort.h"

namespace ridge::grammar {

namespace {

// What sorting the tokens from `chain` depends on, spelled canonically: the rest of each frame's
// alternative and the rules reachable from there, numbered in the order first met -- but only the
// rules a token can enter, those fewer than `horizon` bytes (the longest token) away; farther
// references are spelled as cut. Two chains with the same spelling sort every token the same way,
// in any grammar: a string of at most 200 characters looks the same from its 10th character as
// from its 100th to a token of at most 64 bytes. The top frame and the frames below it are spelled
// apart (each as if it began the token: the pair still fixes the sort), so one spelling of the
// frames below serves every stack that shares them. `stacked` false spells alternatives instead
// (the tops of the stacks sorted together: each begins the token).
std::string chain_key(const FlatGrammar& g, const int32_t* chain, size_t n_chain, int32_t horizon, bool stacked) {
  // Fewest bytes read before each reachable rule is entered (Dijkstra over alternatives' prefixes).
  std::unordered_map<int32_t, int32_t> dist;
  using Item = std::pair<int32_t, int32_t>;  // (bytes before, position)
  std::vector<Item> heap;
  auto push = [&](int32_t d, int32_t pos) {
    heap.emplace_back(d, pos);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  // Frames that resume farther than a token reaches are never read from: spelled as one cut, so a
  // deep stack (a string of 2^k-character blocks) looks the same whatever lies below the reach.
  size_t n_spelled = n_chain;
  {
    int32_t d = 0;
    for (size_t i = 0; i < n_chain; ++i) {
      if (d > horizon) {
        n_spelled = i;
        break;
      }
      const int32_t pos = chain[i];
      push(d, pos);
      if (!stacked) continue;
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
  for (size_t i = 0; i < n_spelled; ++i) spell_from(chain[i]);
  if (n_spelled < n_chain) key.push_back('C');
  for (size_t i = 0; i < queue.size(); ++i) {
    key.push_back('[');
    for (int32_t start : g.alt_starts[queue[i]]) spell_from(start);
  }
  return key;
}

// The longest run of plain characters a mask needs to know: a plain token's most characters, less one.
int32_t plain_run_cap(const TokenVocab& vocab) { return std::max(vocab.plain().max_slots() - 1, 0); }

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
    const size_t bytes = key.size() + tokens->memory_bytes() + 64;
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
    : flat_(std::make_shared<const FlatGrammar>(FlatGrammar::from(grammar))),
      vocab_(std::move(vocab)),
      limits_(limits) {
  const auto start = std::chrono::steady_clock::now();
  Pda pda(flat_);
  pda.initial();  // refuses an exploding start before any work
  PlainRuns runs(pda, plain_run_cap(*vocab_));
  PlainRuns* plain = limits_.sort_plain_text ? &runs : nullptr;
  positions_.resize(flat_->n_positions());
  for (int32_t pos = 0; pos < flat_->n_positions(); ++pos) {
    if (flat_->elems[pos].kind != FlatGrammar::Kind::kBytes || flat_->lexical_at(pos)) continue;
    positions_[pos] = std::make_shared<const PositionTokens>(sort_tokens(pda, plain, pda.start_at(pos), *vocab_));
    if (std::chrono::steady_clock::now() - start > limits.timeout)
      throw GrammarError(fmt::format("grammar: compiling took over {} ms (a grammar of {} positions); simplify it",
                                     limits.timeout.count(), flat_->n_positions()));
  }
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::shared_ptr<const PositionTokens> CompiledGrammar::tokens_for(const std::vector<int32_t>& tops,
                                                                 const std::vector<int32_t>& below) const {
  if (tops.size() == 1 && below.empty() && positions_[tops[0]]) return positions_[tops[0]];
  const auto bytes_of = [](const std::vector<int32_t>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int32_t));
  };
  const std::string tops_key = "t" + bytes_of(tops), below_key = "b" + bytes_of(below);
  const std::string own_key = tops_key + below_key;
  {
    std::lock_guard lock(mutex_);
    if (auto it = chains_.find(own_key); it != chains_.end()) return it->second;
  }
  std::shared_ptr<const PositionTokens> tokens;
  {
    std::lock_guard walk_lock(walk_mutex_);
    if (!walk_pda_) {
      walk_pda_ = std::make_unique<Pda>(flat_);
      if (limits_.sort_plain_text) walk_runs_ = std::make_unique<PlainRuns>(*walk_pda_, plain_run_cap(*vocab_));
    }
    TokenSort sort(*walk_pda_, walk_runs_.get(), walk_pda_->start_group(tops, below), *vocab_);
    // Spelling the frames costs more than most sorts: only a long walk is looked for in the cache
    // shared with other grammars.
    std::string shared_key;
    if (sort.walk_bound() > limits_.share_walks_above) {
      shared_key = shared_chain_key(tops_key, tops, below_key, below);
      tokens = SharedChainCache::get().find(shared_key);
    }
    if (!tokens) {
      tokens = std::make_shared<const PositionTokens>(sort.finish());
      if (!shared_key.empty()) SharedChainCache::get().put(shared_key, tokens);
    }
  }
  std::lock_guard lock(mutex_);
  chains_.emplace(own_key, tokens);
  return tokens;
}

std::string CompiledGrammar::shared_chain_key(const std::string& tops_key, const std::vector<int32_t>& tops,
                                              const std::string& below_key, const std::vector<int32_t>& below) const {
  const int32_t horizon = vocab_->max_token_bytes();
  std::string key = std::to_string(vocab_->id()) + (limits_.sort_plain_text ? "p:" : ":");
  std::lock_guard lock(mutex_);
  auto [top, top_added] = spelled_.try_emplace(tops_key);
  if (top_added) top->second = fingerprint(chain_key(*flat_, tops.data(), tops.size(), horizon, false));
  key += top->second;
  auto [low, low_added] = spelled_.try_emplace(below_key);
  if (low_added) low->second = fingerprint(chain_key(*flat_, below.data(), below.size(), horizon, true));
  key += low->second;
  return key;
}

size_t CompiledGrammar::memory_bytes() const {
  size_t total = 0;
  auto add = [&](const std::shared_ptr<const PositionTokens>& p) {
    if (p) total += p->memory_bytes();
  };
  for (const auto& p : positions_) add(p);
  std::lock_guard lock(mutex_);
  for (const auto& [key, p] : chains_) add(p);
  return total;
}

}  // namespace ridge::grammar
