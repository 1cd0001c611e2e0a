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

// Walks the trie from `pos` with its caller unknown and sorts every token (see the header).
PositionTokens sort_tokens(Pda& pda, int32_t pos, const TokenVocab& vocab) {
  const auto& trie = vocab.trie();
  const auto& trie_tokens = vocab.trie_tokens();
  PositionTokens out;
  std::vector<int32_t> accepted;
  // Per depth on the current branch: the state after that many bytes, and the depths at which the
  // position's frame had completed.
  std::vector<Pda::StateId> state(1, pda.start_at(pos));
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

}  // namespace

CompiledGrammar::CompiledGrammar(const Grammar& grammar, std::shared_ptr<const TokenVocab> vocab,
                                 const CompileLimits& limits)
    : flat_(std::make_shared<const FlatGrammar>(FlatGrammar::from(grammar))), vocab_(std::move(vocab)) {
  const auto start = std::chrono::steady_clock::now();
  Pda pda(flat_);
  pda.initial();  // refuses an exploding start before any work
  positions_.resize(flat_->n_positions());
  for (int32_t pos = 0; pos < flat_->n_positions(); ++pos) {
    if (flat_->elems[pos].kind != FlatGrammar::Kind::kBytes) continue;
    positions_[pos] = sort_tokens(pda, pos, *vocab_);
    if (std::chrono::steady_clock::now() - start > limits.timeout)
      throw GrammarError(fmt::format("grammar: compiling took over {} ms (a grammar of {} positions); simplify it",
                                     limits.timeout.count(), flat_->n_positions()));
  }
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

size_t CompiledGrammar::memory_bytes() const {
  size_t total = 0;
  for (const auto& p : positions_) total += p.accepted.memory_bytes() + p.dependent_tokens.size() * 6;
  return total;
}

}  // namespace ridge::grammar
