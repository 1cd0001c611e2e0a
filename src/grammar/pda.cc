#include "grammar/pda.h"

#include <algorithm>

#include <fmt/format.h>

namespace ridge::grammar {

namespace {

constexpr Pda::StateId kUnknown = -2;
// One closure may visit this many (position, parent) pairs; more means an exploding grammar.
constexpr size_t kMaxClosure = 1 << 20;

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

Pda::Pda(std::shared_ptr<const FlatGrammar> grammar) : grammar_(std::move(grammar)) {
  nodes_.push_back({-1, -1});  // kAccept
  nodes_.push_back({-1, -1});  // kSentinel
  visited_keys_.assign(1024, 0);
  visited_stamp_.assign(1024, 0);
}

void Pda::new_closure() {
  out_.clear();
  out_accept_ = out_popped_ = false;
  visited_count_ = 0;
  if (++stamp_ == 0) {
    std::fill(visited_stamp_.begin(), visited_stamp_.end(), 0);
    stamp_ = 1;
  }
}

bool Pda::visit(int32_t pos, int32_t parent) {
  if (2 * (visited_count_ + 1) > visited_keys_.size()) {
    // Grow and re-insert this closure's keys.
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < visited_keys_.size(); ++i)
      if (visited_stamp_[i] == stamp_) keys.push_back(visited_keys_[i]);
    visited_keys_.assign(visited_keys_.size() * 2, 0);
    visited_stamp_.assign(visited_keys_.size(), 0);
    const size_t mask = visited_keys_.size() - 1;
    for (uint64_t k : keys) {
      size_t i = mix(k) & mask;
      while (visited_stamp_[i] == stamp_) i = (i + 1) & mask;
      visited_keys_[i] = k;
      visited_stamp_[i] = stamp_;
    }
  }
  const uint64_t key = pair_key(pos, parent);
  const size_t mask = visited_keys_.size() - 1;
  for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    if (visited_stamp_[i] != stamp_) {
      visited_keys_[i] = key;
      visited_stamp_[i] = stamp_;
      if (++visited_count_ > kMaxClosure)
        throw GrammarError(fmt::format("grammar: one step expands to over {} parser positions", kMaxClosure));
      return true;
    }
    if (visited_keys_[i] == key) return false;
  }
}

int32_t Pda::intern_node(int32_t pos, int32_t parent) {
  auto [it, added] = node_ids_.try_emplace(pair_key(pos, parent), static_cast<int32_t>(nodes_.size()));
  if (added) nodes_.push_back({pos, parent});
  return it->second;
}

void Pda::expand(int32_t pos, int32_t parent) {
  const FlatGrammar& g = *grammar_;
  work_.clear();
  work_.emplace_back(pos, parent);
  while (!work_.empty()) {
    auto [p, par] = work_.back();
    work_.pop_back();
    if (!visit(p, par)) continue;
    const FlatGrammar::Elem& e = g.elems[p];
    switch (e.kind) {
      case FlatGrammar::Kind::kBytes:
        out_.push_back(intern_node(p, par));
        break;
      case FlatGrammar::Kind::kEnd:
        if (par == kAccept)
          out_accept_ = true;
        else if (par == kSentinel)
          out_popped_ = true;
        else
          work_.emplace_back(nodes_[par].pos, nodes_[par].parent);
        break;
      case FlatGrammar::Kind::kRule: {
        // A call in tail position returns straight to the caller's continuation.
        const int32_t cont = g.elems[p + 1].kind == FlatGrammar::Kind::kEnd ? par : intern_node(p + 1, par);
        for (int32_t start : g.alt_starts[e.arg]) work_.emplace_back(start, cont);
        break;
      }
    }
  }
}

Pda::StateId Pda::intern_scratch() {
  if (out_.empty() && !out_accept_ && !out_popped_) return kDead;
  std::sort(out_.begin(), out_.end());
  out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
  uint64_t h = mix(out_accept_ * 2 + out_popped_ + 0x9e3779b97f4a7c15ULL);
  for (int32_t n : out_) h = mix(h ^ static_cast<uint32_t>(n));
  auto [lo, hi] = state_ids_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const State& s = states_[it->second];
    if (s.accept == out_accept_ && s.popped == out_popped_ && s.nodes == out_) return it->second;
  }
  const StateId id = static_cast<StateId>(states_.size());
  states_.push_back(State{out_, out_accept_, out_popped_, h});
  transitions_.emplace_back();
  classes_.emplace_back();
  state_ids_.emplace(h, id);
  return id;
}

Pda::StateId Pda::initial() {
  new_closure();
  for (int32_t start : grammar_->alt_starts[grammar_->root]) expand(start, kAccept);
  return intern_scratch();
}

Pda::StateId Pda::start_at(int32_t pos) {
  new_closure();
  expand(pos, kSentinel);
  return intern_scratch();
}

Pda::StateId Pda::start_group(const std::vector<int32_t>& tops, const std::vector<int32_t>& below) {
  int32_t parent = kSentinel;
  for (size_t i = below.size(); i-- > 0;) parent = intern_node(below[i], parent);
  new_closure();
  for (int32_t top : tops) expand(top, parent);
  return intern_scratch();
}

Pda::StateId Pda::expand_node(int32_t node) {
  if (auto it = expanded_.find(node); it != expanded_.end()) return it->second;
  new_closure();
  if (node == kAccept)
    out_accept_ = true;
  else if (node == kSentinel)
    out_popped_ = true;
  else
    expand(nodes_[node].pos, nodes_[node].parent);
  const StateId s = intern_scratch();
  expanded_[node] = s;
  return s;
}

Pda::StateId Pda::after_pop(int32_t node) {
  if (auto it = after_pop_.find(node); it != after_pop_.end()) return it->second;
  new_closure();
  const int32_t parent = nodes_[node].parent;
  if (parent == kAccept)
    out_accept_ = true;
  else if (parent == kSentinel)
    out_popped_ = true;
  else
    expand(nodes_[parent].pos, nodes_[parent].parent);
  const StateId s = intern_scratch();
  after_pop_[node] = s;
  return s;
}

Pda::StateId Pda::step(StateId state, uint8_t byte) {
  if (state < 0) return kDead;
  if (const auto& table = transitions_[state]) {
    if ((*table)[byte] != kUnknown) return (*table)[byte];
    // A second byte from this state: bytes the same stacks read lead to the same state, so a trie
    // walk fanning out from here computes one closure per class of bytes, not one per byte.
    auto& classes = classes_[state];
    if (!classes) {
      classes = std::make_unique<ByteClasses>();
      classes->next.assign(byte_classes(state, classes->of), kUnknown);
      classes->next[0] = kDead;
      for (int b = 0; b < 256; ++b)
        if ((*table)[b] != kUnknown) classes->next[classes->of[b]] = (*table)[b];
    }
    if (const StateId known = classes->next[classes->of[byte]]; known != kUnknown) return (*table)[byte] = known;
  }
  new_closure();
  const FlatGrammar& g = *grammar_;
  // expand() grows nodes_ only; states_ grows after the loop.
  for (int32_t n : states_[state].nodes) {
    const Node node = nodes_[n];
    if (g.sets[g.elems[node.pos].arg].has(byte)) expand(node.pos + 1, node.parent);
  }
  const StateId next = intern_scratch();
  auto& t = transitions_[state];  // intern_scratch may have grown transitions_
  if (!t) {
    t = std::make_unique<std::array<StateId, 256>>();
    t->fill(kUnknown);
  }
  (*t)[byte] = next;
  if (const auto& classes = classes_[state]) classes->next[classes->of[byte]] = next;
  return next;
}

Pda::StateId Pda::step(StateId state, const uint8_t* bytes, size_t n) {
  for (size_t i = 0; i < n && state >= 0; ++i) state = step(state, bytes[i]);
  return state;
}

ByteSet Pda::next_bytes(StateId s) const {
  ByteSet out;
  const FlatGrammar& g = *grammar_;
  for (int32_t n : states_[s].nodes) out |= g.sets[g.elems[nodes_[n].pos].arg];
  return out;
}

int Pda::byte_classes(StateId s, std::array<uint16_t, 256>& classes) const {
  std::vector<int32_t> positions;
  for (int32_t n : states_[s].nodes) positions.push_back(nodes_[n].pos);
  return grammar_->byte_classes(positions, classes);
}

}  // namespace ridge::grammar
